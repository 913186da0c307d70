"""Claims over kernels in an expectation file: `kernels:` (with `match:`) instead of `case:`, static
facts only, and a file of such claims needs no cases."""

import pytest
import yaml

from ncuverify.errors import InputError
from ncuverify.spec import load

CITE = {"document": "d", "section": "1", "figure": "f"}


def _file(tmp_path, claims, cases=None, **extra):
    (tmp_path / "ops.cu").write_text("__global__ void k(float* a) {}\n")
    content = {
        "kernels": {"gemms": {"file": "ops.cu", "match": "_gemm"}, "one": {"file": "ops.cu", "entry": "k"}}
    }
    if cases is not None:
        content["cases"] = cases
    content["claims"] = [
        {"id": f"c{i}", "expect": {"at_most": 128}, "cite": CITE, **c} for i, c in enumerate(claims)
    ]
    content |= extra
    path = tmp_path / "k.yaml"
    path.write_text(yaml.safe_dump(content, sort_keys=False))
    return path


def _refused(path) -> str:
    with pytest.raises(InputError) as raised:
        load(path)
    return str(raised.value)


def test_a_file_whose_claims_all_read_kernels_needs_no_cases(tmp_path):
    spec = load(
        _file(
            tmp_path,
            [
                {"kernels": "gemms", "metric": "static__registers_per_thread"},
                {"kernels": "one", "match": "k", "metric": "sass('LDG')"},
            ],
        )
    )
    claims = spec.content.claims
    assert [(c.kernels, c.match, c.case) for c in claims] == [("gemms", None, None), ("one", "k", None)]
    assert spec.content.cases == {}


def test_without_cases_and_without_claims_over_kernels_the_message_is_as_before(tmp_path):
    message = _refused(_file(tmp_path, [{"case": "x", "metric": "static__registers_per_thread"}]))
    assert "cases: missing: 'cases' is required" in message


def test_a_file_that_mixes_them_without_cases_says_what_to_give(tmp_path):
    path = _file(
        tmp_path,
        [{"kernels": "gemms", "metric": "static__registers_per_thread"}, {"case": "x", "metric": "m.sum"}],
    )
    assert "cases: give 'cases' (what to launch): only a file whose every claim reads 'kernels'" in _refused(
        path
    )


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        (
            {"kernels": "gemms", "metric": "gpu__time_duration.sum"},
            "claims[0].metric: claim c0 reads 'kernels': its metric reads static facts only"
            " (static__*, sass(...)), not gpu__time_duration.sum",
        ),
        (
            {"kernels": "gemms", "metric": "static__registers_per_thread / dram__bytes_read.sum"},
            "not dram__bytes_read.sum",
        ),
        (
            {"kernels": "gemms", "metric": "static__registers_per_thread@c"},
            "static__registers_per_thread@c names a case; write static__registers_per_thread",
        ),
        (
            {"kernels": "gemm", "metric": "static__registers_per_thread"},
            "no kernel named 'gemm' (did you mean 'gemms'?)",
        ),
        ({"kernels": "gemms", "metric": "static__regs"}, "no static fact static__regs"),
        (
            {"kernels": "gemms", "case": "c", "metric": "static__barriers"},
            "give 'case' (one launch) or 'kernels'",
        ),
        ({"match": "x", "metric": "static__barriers", "case": "c"}, "'match' narrows a claim's 'kernels'"),
        (
            {"kernels": "gemms", "match": "(a", "metric": "static__barriers"},
            "kernel pattern '(a' is not a regular",
        ),
        ({"kernels": "gemms", "control": "c", "metric": "static__barriers"}, "it takes no 'control'"),
    ],
)
def test_wrong_claims_over_kernels_are_refused_naming_the_field(tmp_path, claim, message):
    cases = {"c": {"kernel": "one", "grid": 1, "block": 32}}
    assert message in _refused(_file(tmp_path, [claim], cases=cases))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"kernel": "a"}, "allow[0].reason: missing: 'reason' is required"),
        ({"kernel": "a", "reason": ""}, "allow[0].reason: String should have at least 1 character"),
        ({"kernel": "a", "match": "b", "reason": "r"}, "give exactly one of 'kernel' (a name) or 'match'"),
        ({"reason": "r"}, "give exactly one of 'kernel'"),
        ({"match": "(", "reason": "r"}, "kernel pattern '(' is not a regular expression"),
        ({"kernel": "a", "claim": "c9", "reason": "r"}, "allow[0].claim: no claim 'c9'"),
        ({"kernel": "a", "metric": "static__regs", "reason": "r"}, "'static__regs' is no static fact"),
        ({"kernel": "a", "color": "red", "reason": "r"}, "color"),
    ],
)
def test_wrong_allow_entries_are_refused(tmp_path, entry, message):
    path = _file(tmp_path, [{"kernels": "gemms", "metric": "static__registers_per_thread"}], allow=[entry])
    assert message in _refused(path)


def test_an_allow_list_loads(tmp_path):
    allow = [
        {"kernel": "axpy_gemm<64>", "reason": "known"},
        {"match": "_gemm", "claim": "c0", "metric": "static__registers_per_thread", "reason": "r"},
    ]
    spec = load(
        _file(tmp_path, [{"kernels": "gemms", "metric": "static__registers_per_thread"}], allow=allow)
    )
    first, second = spec.content.allow
    assert first.covers_kernel("axpy_gemm<64>", "void axpy_gemm<64>(float*)", "_Z1x")
    assert not first.covers_kernel("axpy_gemm<6>", "void axpy_gemm<6>(float*)", "_Z1y")
    assert second.covers_kernel("other", "void axpy_gemm<6>(float*)", "_Z1y")
    assert second.covers_claim(spec.content.claims[0]) and not second.covers_growth(
        "static__registers_per_thread"
    )
    assert first.covers_growth("static__stack_frame_bytes")


def test_a_claim_of_ones_own_cites_no_document_and_may_say_why(tmp_path):
    case = {"kernel": "one", "grid": 1, "block": 32, "args": [{"buffer": "float32", "count": 32}]}
    path = _file(tmp_path, [{"case": "c", "metric": "launch__registers_per_thread"}], cases={"c": case})
    text = path.read_text().replace("  cite:\n    document: d\n    section: '1'\n    figure: f\n", "")
    path.write_text(text.rstrip("\n") + "\n  why: two blocks per SM stay resident\n")
    [claim] = load(path).content.claims
    assert (claim.cite, claim.why) == (None, "two blocks per SM stay resident")
    path.write_text(text)  # neither cite nor why: a bare claim is one too
    assert load(path).content.claims[0].cite is None
    # a figure the hardware does not bear out still needs its note
    holds_no = {"case": "c", "metric": "launch__registers_per_thread", "cite": {**CITE, "holds": "no"}}
    assert "needs a 'note'" in _refused(_file(tmp_path, [holds_no], cases={"c": case}))


def test_a_key_known_elsewhere_is_not_suggested_as_itself(tmp_path):
    """`kernel` is a key of cases; on a claim the close key is `kernels`, never `kernel` again."""
    message = _refused(_file(tmp_path, [{"kernel": "one", "metric": "static__registers_per_thread"}]))
    assert "claims[0].kernel: unknown key 'kernel' (did you mean 'kernels'?)" in message


def test_a_kernel_outside_an_unmarked_folder_says_how_to_mark_the_project(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "gate").mkdir()
    path = tmp_path / "gate" / "k.yaml"
    path.write_text(
        "kernels: {k: {file: ../kernels/k.cu, entry: k}}\ncases: {one: {kernel: k, grid: 1, block: 32}}\n"
        "claims: [{id: c, case: one, metric: static__registers_per_thread, expect: {at_most: 9}}]\n"
    )
    message = _refused(path)
    assert "lies outside the project" in message
    assert "put one of .git, pyproject.toml, .ncuverify-root at its top" in message
    (tmp_path / ".ncuverify-root").touch()
    assert load(path).content.kernels["k"].file == "../kernels/k.cu"
