"""Which topic explains a claim, from the metrics it reads."""

import pytest

from ncuverify import explain as ex


@pytest.mark.parametrize(
    ("names", "topic"),
    [
        (["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], "shared"),
        (["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"], "shared"),
        (["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"], "global"),
        (["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], "global"),
        (["dram__bytes_read.sum"], "global"),
        (["lts__t_sectors_srcunit_tex_op_read.sum"], "global"),
        (["dram__bytes_read.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"], "shared"),
        (["gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active"], None),
        ([], None),
    ],
)
def test_topic_of(names, topic):
    assert ex.topic_of(names) == topic
