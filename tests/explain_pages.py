"""The pages of the second pass that the explanation tests read: the H200 capture, and synthetic pages
of the shapes the capture does not have."""

from pathlib import Path

CAPTURE = Path(__file__).parent / "fixtures" / "transpose_sections"


LINE_90 = "out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];"


# A details page as ncu writes it: log lines first, ragged rows (metric rows end after "Metric Value"),
# thousands separators, "n/a", rule text with markup, one rule without text.
DETAILS_HEADER = (
    '"ID","Kernel Name","Section Name","Metric Name","Metric Value",'
    '"Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"'
)


SYNTHETIC_DETAILS = "\n".join(
    [
        "==PROF== Connected to process 1 (/usr/bin/python3)",
        "==WARNING== something about the clocks",
        DETAILS_HEADER,
        '"0","gather","Memory Workload Analysis","L2 Theoretical Sectors Global","3,670,016",',
        '"0","gather","Memory Workload Analysis","DRAM Throughput","n/a",',
        '"0","gather","SourceCounters","","","UncoalescedGlobalAccess","OPT",'
        '"See the @section:SourceCounters:Source Counters@ section and the '
        '@url:CUDA Best Practices Guide:https://docs.nvidia.com/cuda/guide.html#coalesced@.",'
        '"global","1,234.5"',
        '"0","gather","MemoryWorkloadAnalysis_Tables","","","MemoryCacheAccessPattern","WRN",'
        '"Only 4.0 of 32 bytes per sector are used.","global","n/a"',
        '"0","gather","LaunchStats","","","LaunchConfiguration","OPT","","global","0"',
        '"1","scatter","SourceCounters","","","SharedMemoryConflicts","OPT",'
        '"The "tile" array has conflicts, mostly "here".","local","50"',
        '"2","idle","Memory Workload Analysis","DRAM Throughput","0",',
        "==PROF== Disconnected from process 1",  # log lines can follow the rows too
    ]
)


# A source page where one launch spans two files (an inlined header) and the next launch follows.
SOURCE_HEADER = (
    '"Line No","Source","Address","Source","L2 Theoretical Sectors Global Excessive",'
    '"L2 Theoretical Sectors Global","Address Space"'
)


SYNTHETIC_SOURCE = "\n".join(
    [
        '"File Path","/src/gather.cu"',
        '"Function Name","gather"',
        SOURCE_HEADER,
        '"10","int i = idx[threadIdx.x];","-","-","0","1,024","Global(1)"',
        '"","","0x10","      LDG.E R2, [R2.64]","0","1,024","Global(1)"',
        '"11","out[i] = in[i * 32];","-","-","3,670,016","4,194,304","Global(2)"',
        '"File Path","/usr/include/helpers.cuh"',
        SOURCE_HEADER,
        '"5","return p[k * stride];","-","-","524,288","1,048,576","-"',
        '"6","printf("%d","x");","-","-","n/a","-","-"',
        '"File Path","/src/gather.cu"',
        '"Function Name","scatter"',
        SOURCE_HEADER,
        '"20","out[idx[i]] = v;","-","-","0","2,048","-"',
    ]
)
