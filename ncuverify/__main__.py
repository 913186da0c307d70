from ncuverify.cli import main

main()
