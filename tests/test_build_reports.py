"""Reading ptxas's resource report, cuobjdump's resource table and nvdisasm's SASS text."""

from ncuverify.build.reports import ResourceUsage, parse_disassembly, parse_ptxas_report, parse_resource_usage

PTXAS_LOG = """ptxas info    : 3433 bytes gmem
ptxas info    : Compiling entry function '_Z11copy_strideILi32EEvPKfPf' for 'sm_90'
ptxas info    : Function properties for _Z11copy_strideILi32EEvPKfPf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compiling entry function 'sp' for 'sm_90'
ptxas info    : Function properties for sp
ptxas         .     1008 bytes stack frame, 888 bytes spill stores, 1044 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 4224 bytes smem, 1008 bytes cumulative stack size
"""


def test_ptxas_report_is_parsed_per_function():
    report = parse_ptxas_report(PTXAS_LOG)
    assert report["_Z11copy_strideILi32EEvPKfPf"] == ResourceUsage(10, 0, 0, 0, 0, 0)
    assert report["sp"] == ResourceUsage(32, 1008, 888, 1044, 4224, 1)


RESOURCE_USAGE = """
Resource usage:
 Common:
  GLOBAL:0
 Function _Z11read_strideILi32EEvPKfPf:
  REG:10 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:544 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function sp:
  REG:32 STACK:1008 SHARED:4224 LOCAL:0 CONSTANT[0]:360 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def test_resource_usage_is_parsed_per_function():
    usage = parse_resource_usage(RESOURCE_USAGE)
    assert usage["sp"]["STACK"] == 1008 and usage["sp"]["CONSTANT[0]"] == 360
    assert usage["_Z11read_strideILi32EEvPKfPf"]["REG"] == 10
    assert "Common" not in usage


DISASSEMBLY = """
//--------------------- .text.scale               --------------------------
	.section	.text.scale,"ax",@progbits
scale:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0070*/               @P0 EXIT ;
        /*00d0*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*00e0*/              @!P1 STG.E desc[UR4][R4.64], R7 ;
        /*0120*/                   BRA `(.L_x_0);
        /*0130*/                   NOP;
//--------------------- .text.other               --------------------------
	.section	.text.other,"ax",@progbits
        /*0000*/                   EXIT ;
"""


def test_disassembly_text_is_parsed():
    functions = parse_disassembly(DISASSEMBLY)
    assert [i.mnemonic for i in functions["scale"]] == ["LDC", "EXIT", "LDG.E.128.CONSTANT", "STG.E", "BRA"]
    assert functions["scale"][2].offset == 0xD0
    assert [i.mnemonic for i in functions["other"]] == ["EXIT"]
