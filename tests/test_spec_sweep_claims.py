"""Claims over a sweep: one plain claim per case of the sweep, its other cases read at the same point."""

from sweep_files import SWEPT_COPY, claim, loaded, refused

STRIDED = SWEPT_COPY.replace("  copy:", "  strided:")
PLAIN = "  single:\n    kernel: copy\n    grid: 1\n    block: 32\n"


def test_a_claim_on_a_swept_case_is_made_for_every_case_of_the_sweep(tmp_path):
    spec = loaded(tmp_path, SWEPT_COPY, claim("sectors", "copy") + claim("other", "copy"))
    assert [(c.id, c.case) for c in spec.content.claims] == [
        ("sectors__n_1024", "copy__n_1024"),
        ("sectors__n_4096", "copy__n_4096"),
        ("other__n_1024", "copy__n_1024"),
        ("other__n_4096", "copy__n_4096"),
    ]


def test_each_case_and_claim_of_a_sweep_carries_its_point(tmp_path):
    spec = loaded(tmp_path, SWEPT_COPY + PLAIN, claim("sectors", "copy") + claim("one", "single"))
    assert spec.points.cases == {"copy__n_1024": (("n", 1024),), "copy__n_4096": (("n", 4096),)}
    assert spec.points.claims == {"sectors__n_1024": (("n", 1024),), "sectors__n_4096": (("n", 4096),)}


def test_the_control_and_the_cases_named_with_at_are_read_at_the_same_point(tmp_path):
    metric = "global_ld_sectors_per_request /  global_ld_sectors_per_request@strided + gpu__time_duration.sum@single"
    claims = claim("ratio", "copy", metric, "    control: strided\n")
    spec = loaded(tmp_path, SWEPT_COPY + STRIDED + PLAIN, claims)
    assert [(c.id, c.control, c.metric) for c in spec.content.claims] == [
        ("ratio__n_1024", "strided__n_1024", metric.replace("@strided", "@strided__n_1024")),
        ("ratio__n_4096", "strided__n_4096", metric.replace("@strided", "@strided__n_4096")),
    ]
    refs = spec.content.claims[1].metric_refs()
    assert list(dict.fromkeys(ref.case for ref in refs)) == ["copy__n_4096", "strided__n_4096", "single"]


def test_a_case_of_a_sweep_is_named_as_any_case(tmp_path):
    metric = "global_ld_sectors_per_request - global_ld_sectors_per_request@copy__n_4096"
    spec = loaded(tmp_path, SWEPT_COPY + PLAIN, claim("one", "single", metric, "    control: copy__n_1024\n"))
    assert [(c.id, c.case, c.control, c.metric) for c in spec.content.claims] == [
        ("one", "single", "copy__n_1024", metric)
    ]


def test_a_swept_case_read_from_a_claim_not_on_a_sweep_must_be_named_by_its_point(tmp_path):
    message = refused(tmp_path, SWEPT_COPY + PLAIN, claim("one", "single", "x@copy"))
    assert message == (
        "FILE:20: claims[0].metric: case copy is swept: name one of its cases (copy__n_1024, copy__n_4096),"
        " or give the claim a swept case"
    )
    message = refused(tmp_path, SWEPT_COPY + PLAIN, claim("one", "single", extra="    control: copy\n"))
    assert message.startswith("FILE:23: claims[0].control: case copy is swept: name one of its cases")


def test_a_case_swept_over_other_variables_must_agree_at_exactly_one_point(tmp_path):
    wider = STRIDED.replace('sweep: {n: [1024, "2**12"]}', "sweep: {n: [1024, 4096], k: [1, 2]}")
    message = refused(tmp_path, SWEPT_COPY + wider, claim("ratio", "copy", "x@strided"))
    assert message == (
        "FILE:25: claims[0].metric: case strided is swept: at copy's n=1024, 2 of its cases agree;"
        " name one of its cases"
    )
    other = STRIDED.replace('sweep: {n: [1024, "2**12"]}', "sweep: {n: [2048]}")
    message = refused(tmp_path, SWEPT_COPY + other, claim("ratio", "copy", extra="    control: strided\n"))
    assert message.startswith(
        "FILE:28: claims[0].control: case strided is swept: at copy's n=1024, none of its cases"
    )


def test_a_problem_of_a_swept_claim_is_said_once_at_the_claim_written(tmp_path):
    claims = claim("fine", "copy") + claim("bad", "copy").replace("{equals: 4}", "{equals: 4, at_most: 5}")
    assert refused(tmp_path, SWEPT_COPY, claims) == (
        "FILE:22: claims[1].expect: give exactly one of equals, at_least, at_most, between or approx"
    )


def test_an_expanded_claim_id_that_repeats_another_is_refused_at_the_claim_written(tmp_path):
    claims = claim("sectors", "copy") + claim("sectors__n_1024", "copy__n_1024")
    assert refused(tmp_path, SWEPT_COPY, claims) == (
        "FILE:19: claims[1].id: duplicate claim id 'sectors__n_1024' (also claims[0])"
    )
