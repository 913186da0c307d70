"""Stage 4, the judge: every claim given one verdict from the measurements (claims), a claim over
kernels judged kernel by kernel (over_kernels), and the kernel sets those claims and a baseline's
ratchet read (kernel_sets)."""
