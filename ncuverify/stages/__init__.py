"""The steps of a check, each on its own values: a file prepared (loaded, built, judged on its static
facts), the run's profile, a file's profiler claims judged, failed memory claims explained."""
