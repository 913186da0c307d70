"""What ncuverify knows of Nsight Compute's own output and names: its CSV pages (pages), the numbers
in them (numbers), and the metric names each chip has (metrics)."""
