"""Which ncu process profiles which case: grouping by metrics, merging when it saves, spreading over GPUs."""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import JSON_VALUES
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.build.cache import MARKER
from ncuverify.names import is_patched
from ncuverify.profile import schedule
from ncuverify.profile.passes import PassModel
from ncuverify.profile.schedule import Group, PassCounts, ProfiledCase, groups, spread


def case(name: str, metrics: set[str], launches: int = 1) -> ProfiledCase:
    return ProfiledCase(name, launches, frozenset(metrics))


def known(table: dict[frozenset[str], int]) -> PassCounts:
    passes = PassCounts()
    for metrics, count in table.items():
        passes.remember(metrics, count)
    return passes


def test_cases_with_the_same_metrics_share_a_process_in_their_order():
    cases = [case("a", {"x"}), case("b", {"y"}), case("c", {"x"})]
    plan = groups(cases, known({frozenset({"x"}): 1, frozenset({"y"}): 1, frozenset({"x", "y"}): 1}))
    # Merging adds no pass, so everything shares one process; the cases keep the order given.
    assert plan == [Group(frozenset({"x", "y"}), ("a", "b", "c"))]


def test_groups_stay_apart_when_merging_costs_more_passes_than_a_start():
    cheap = [case(f"cheap{i}", {"gpu__time_duration.sum"}, launches=5) for i in range(40)]
    dear = [case("dear", {"l1tex__a.sum", "lts__b.sum"})]
    passes = known(
        {
            frozenset({"gpu__time_duration.sum"}): 1,
            frozenset({"l1tex__a.sum", "lts__b.sum"}): 7,
            frozenset({"gpu__time_duration.sum", "l1tex__a.sum", "lts__b.sum"}): 7,
        }
    )
    # 200 launches x 6 more passes x 0.03 s = 36 s of replays, against one 2.5 s start: two processes.
    plan = groups(cheap + dear, passes)
    assert [g.cases for g in plan] == [tuple(c.name for c in cheap), ("dear",)]


def test_groups_merge_when_the_start_costs_more_than_the_passes():
    a = [case("a", {"l1tex__a.sum"})]
    b = [case("b", {"lts__b.sum"})]
    passes = known(
        {
            frozenset({"l1tex__a.sum"}): 2,
            frozenset({"lts__b.sum"}): 2,
            frozenset({"l1tex__a.sum", "lts__b.sum"}): 3,
        }
    )
    assert len(groups(a + b, passes)) == 1


def test_unknown_metric_sets_get_the_model_s_count_and_known_ones_ncu_s(tmp_path: Path):
    passes = PassCounts.load(tmp_path / "profile" / "passes.json")
    counters = frozenset({"l1tex__a.sum", "l1tex__b.sum", "lts__c.sum", "dram__d.sum"})
    assert passes.passes(frozenset({"launch__registers_per_thread", "gpu__time_duration.sum"})) == 1
    assert passes.passes(counters) == 3  # two L1TEX counters of no known group: 2 hardware passes + 1
    passes.remember(counters, 5)
    passes.save()
    assert PassCounts.load(tmp_path / "profile" / "passes.json").passes(counters) == 5


def test_a_damaged_pass_file_only_costs_a_guess(tmp_path: Path):
    path = tmp_path / "passes.json"
    path.write_text("{not json")
    passes = PassCounts.load(path)
    assert passes.passes(frozenset({"l1tex__a.sum"})) == 1  # the pass model's: one counter, one pass
    assert passes.warnings == (
        f"{path}: ignored (not JSON: Expecting property name enclosed in double quotes: line 1 column 2"
        " (char 1)); the replay passes are guessed",
    )


def test_no_pass_file_yet_is_no_warning(tmp_path: Path):
    assert PassCounts.load(tmp_path / "profile" / "passes.json").warnings == ()
    assert PassCounts.load(None).warnings == ()


# (what the file holds, why it is ignored)
HOSTILE_PASS_FILES = [
    ('{"l1tex__a.sum": -5}', "'l1tex__a.sum': -5 is not a number of passes from 1 to 1000"),
    ('{"l1tex__a.sum": 0}', "'l1tex__a.sum': 0 is not a number of passes from 1 to 1000"),
    ('{"l1tex__a.sum": 1e308}', "'l1tex__a.sum': 1e+308 is not a number of passes from 1 to 1000"),
    ('{"l1tex__a.sum": 2.0}', "'l1tex__a.sum': 2.0 is not a number of passes from 1 to 1000"),
    ('{"l1tex__a.sum": true}', "'l1tex__a.sum': True is not a number of passes from 1 to 1000"),
    ('{"l1tex__a.sum": "3"}', "'l1tex__a.sum': '3' is not a number of passes from 1 to 1000"),
    ('{"l1tex__a.sum": NaN}', "'l1tex__a.sum': nan is not a number of passes from 1 to 1000"),
    ('{"l1tex__a.sum": 1001}', "'l1tex__a.sum': 1001 is not a number of passes from 1 to 1000"),
    (r'{"a\u001b[2J": 0}', "'a\\x1b[2J': 0 is not a number of passes from 1 to 1000"),
    ("[1, 2]", "not an object of metric sets and their passes"),
    (json.dumps({f"m{i}.sum": 2 for i in range(3000)}), "3000 metric sets; at most 512 are kept"),
    (
        json.dumps({"x" * 20000: 2}),
        "the metric set 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'...",
    ),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
]


@pytest.mark.parametrize(("text", "why"), HOSTILE_PASS_FILES, ids=[h[1][:40] for h in HOSTILE_PASS_FILES])
def test_a_hostile_pass_file_is_ignored_with_a_warning(tmp_path: Path, text, why):
    path = tmp_path / "passes.json"
    path.write_text(text)
    passes = PassCounts.load(path)
    assert passes.known == {}
    (warning,) = passes.warnings
    assert warning.startswith(f"{path}: ignored ({why}") and warning.endswith(
        "; the replay passes are guessed"
    )
    assert "\x1b" not in warning


def test_pass_files_that_are_not_files(tmp_path: Path):
    os.mkfifo(tmp_path / "fifo.json")  # opening it to read would wait for a writer for ever
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "huge.json").write_bytes(b" " * (schedule.MAX_PASSES_FILE_BYTES + 1))
    for name, why in [
        ("fifo.json", "not a regular file"),
        ("folder.json", "not a regular file"),
        ("huge.json", "larger than 16 MiB"),
    ]:
        assert PassCounts.load(tmp_path / name).warnings == (
            f"{tmp_path / name}: ignored ({why}); the replay passes are guessed",
        )


def test_a_set_of_known_counters_takes_their_passes_whatever_free_metrics_it_adds():
    counters = frozenset({"l1tex__a.sum", "lts__b.sum", "sm__c.avg", "dram__d.sum"})
    passes = known({counters | {"gpu__time_duration.sum"}: 1})
    # Launch facts, device attributes and the time take no pass: the union is known to take one.
    assert passes.passes(counters | {"launch__grid_size", "device__attribute_clock_rate"}) == 1
    assert passes.passes(counters) == 1
    # A counter more is a set never run: the pass model's (two L1TEX counters of no known pass group:
    # a hardware pass each, and ncu's own).
    assert passes.passes(counters | {"l1tex__e.sum"}) == 3


def test_what_is_remembered_later_answers_for_its_counters():
    passes = known({frozenset({"l1tex__a.sum"}): 2})
    assert passes.passes(frozenset({"l1tex__a.sum", "launch__block_size"})) == 2
    passes.remember(frozenset({"l1tex__a.sum", "gpu__time_duration.sum"}), 3)  # the latest report
    assert passes.passes(frozenset({"l1tex__a.sum", "launch__block_size"})) == 3


def test_time_only_repeats_join_a_one_pass_process_that_holds_the_time():
    """The repeats' process and a one-pass process of counters that also reads the time: the merge adds
    no counter, so it costs no pass and saves a start. Before either set's union had run, its passes
    were guessed from its counters, and the two stayed apart."""
    time = "gpu__time_duration.sum"
    counters = {"l1tex__a.sum", "lts__b.sum", "sm__c.avg", "dram__d.sum", "smsp__e.sum", "sm__f.max"}
    repeats = [case(f"r{i}", {time, "launch__grid_size"}, launches=20) for i in range(5)]
    counted = [case(f"c{i}", counters | {time}) for i in range(3)]
    passes = known({frozenset({time, "launch__grid_size"}): 1, frozenset(counters | {time}): 1})
    plan = groups(repeats + counted, passes)
    assert [g.cases for g in plan] == [tuple(c.name for c in repeats + counted)]
    assert passes.passes(plan[0].metrics) == 1


def test_counts_ncu_could_not_have_meant_are_not_remembered():
    passes = PassCounts()
    for count in (0, -5, 10**6, True):
        passes.remember(frozenset({"l1tex__a.sum"}), count)
    passes.remember(frozenset({f"m{i}_{'x' * 400}.sum" for i in range(100)}), 3)  # too long a set to keep
    assert passes.known == {}


def test_the_oldest_sets_make_room_for_new_ones(tmp_path: Path):
    passes = PassCounts(path=tmp_path / "passes.json")
    for i in range(schedule.MAX_METRIC_SETS + 10):
        passes.remember(frozenset({f"m{i}.sum"}), 2)
    passes.remember(frozenset({"m20.sum"}), 4)  # known again: now the latest
    assert len(passes.known) == schedule.MAX_METRIC_SETS
    assert "m0.sum" not in passes.known and list(passes.known)[-1] == "m20.sum"
    assert passes.save() is None
    again = PassCounts.load(tmp_path / "passes.json")
    assert again.warnings == () and again.known == passes.known


def test_save_writes_the_whole_file_at_once_into_a_marked_folder(tmp_path: Path):
    path = tmp_path / "cache" / "profile" / "passes.json"
    passes = PassCounts(path=path)
    passes.remember(frozenset({"l1tex__a.sum"}), 2)
    assert passes.save() is None
    assert (path.parent / MARKER).is_file()
    passes.remember(frozenset({"l1tex__a.sum"}), 3)
    assert passes.save() is None
    assert json.loads(path.read_text()) == {"l1tex__a.sum": 3}
    assert sorted(p.name for p in path.parent.iterdir()) == [MARKER, "passes.json"]  # nothing half-written


def test_a_folder_that_cannot_be_written_is_a_warning(tmp_path: Path):
    (tmp_path / "cache").write_text("a file where the cache folder should be")
    passes = PassCounts(path=tmp_path / "cache" / "profile" / "passes.json")
    passes.remember(frozenset({"l1tex__a.sum"}), 2)
    warning = passes.save()
    assert warning is not None
    assert warning.startswith(
        f"{tmp_path}/cache/profile/passes.json: the replay passes could not be remembered ("
    )


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_any_json_gives_counts_to_trust_or_a_warning(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("p") / "passes.json"
    path.write_text(json.dumps(value))
    passes = PassCounts.load(path)
    if passes.warnings:
        assert passes.known == {}
    assert all(isinstance(n, int) and 1 <= n <= schedule.MAX_PASSES for n in passes.known.values())


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(
        st.frozensets(st.text(min_size=1, max_size=30), min_size=1, max_size=5),
        st.integers(1, 1000),
        max_size=20,
    )
)
def test_what_is_remembered_is_loaded_back(tmp_path_factory, table):
    path = tmp_path_factory.mktemp("p") / "passes.json"
    passes = PassCounts(path=path)
    for metrics, count in table.items():
        passes.remember(metrics, count)
    assert passes.save() is None
    again = PassCounts.load(path)
    assert again.warnings == ()
    assert all(again.passes(metrics) == passes.passes(metrics) for metrics in table)


def test_one_gpu_gets_every_group_whole():
    cases = [case("a", {"x"}), case("b", {"x"}), case("c", {"y"})]
    plan = [Group(frozenset({"x"}), ("a", "b")), Group(frozenset({"y"}), ("c",))]
    units = spread(plan, cases, [0], PassCounts())
    assert [(u.gpu, u.cases) for u in units] == [(0, ("a", "b")), (0, ("c",))]


def test_two_gpus_share_the_launches_evenly_and_every_case_runs_once():
    cases = [case(f"c{i}", {"x"}, launches=1 + i % 3) for i in range(20)]
    plan = [Group(frozenset({"x"}), tuple(c.name for c in cases))]
    units = spread(plan, cases, [0, 1], PassCounts())
    assert sorted(name for u in units for name in u.cases) == sorted(c.name for c in cases)
    launches = {c.name: c.launches for c in cases}
    loads = [sum(launches[n] for n in u.cases) for u in units]
    assert {u.gpu for u in units} == {0, 1} and abs(loads[0] - loads[1]) <= 3
    # Within a unit the cases keep the group's order.
    for unit in units:
        assert list(unit.cases) == [n for n in plan[0].cases if n in unit.cases]


def test_a_case_that_reads_results_back_never_gets_metrics_it_does_not_need():
    # In-kernel clock() timings read back from the last replay: a SASS-patched pass would slow them.
    timed = case("latency", {"gpu__time_duration.sum"}, launches=1)
    timed = ProfiledCase(timed.name, timed.launches, timed.metrics, pinned=True)
    same = case("same", {"gpu__time_duration.sum"})
    other = case("other", {"smsp__sass_inst_executed_op_global_ld.sum"})
    passes = known(
        {
            frozenset({"gpu__time_duration.sum"}): 1,
            frozenset({"smsp__sass_inst_executed_op_global_ld.sum"}): 1,
            frozenset({"gpu__time_duration.sum", "smsp__sass_inst_executed_op_global_ld.sum"}): 1,
        }
    )
    plan = groups([timed, same, other], passes)
    # Merging would add no pass and save a start, but not with the pinned case's group.
    assert plan == [
        Group(frozenset({"gpu__time_duration.sum"}), ("latency", "same")),
        Group(frozenset({"smsp__sass_inst_executed_op_global_ld.sum"}), ("other",)),
    ]
    unpinned = groups([case("latency", {"gpu__time_duration.sum"}), same, other], passes)
    assert len(unpinned) == 1


def test_a_case_that_reads_results_back_shares_a_process_that_adds_only_hardware_counters():
    # Hardware counters are read without changing the kernel's code: its clock() timings stay as they were.
    timed = ProfiledCase("latency", 1, frozenset({"sm__cycles_active.max"}), pinned=True)
    counters = case("counters", {"dram__bytes_read.sum", "l1tex__t_sector_hit_rate.pct"})
    patched = case("patched", {"smsp__sass_inst_executed_op_global_ld.sum"})
    passes = known({})  # the pass model's counts
    assert [g.cases for g in groups([timed, counters], passes)] == [("latency", "counters")]
    assert [g.cases for g in groups([timed, patched], passes)] == [("latency",), ("patched",)]
    unpinned = ProfiledCase("latency", 1, timed.metrics)
    assert len(groups([unpinned, patched], passes)) == 1  # what keeps them apart is the pin
    assert is_patched("smsp__sass_inst_executed_op_global_ld.sum") and is_patched("sass__inst_executed")
    assert not is_patched("smsp__inst_executed.sum") and not is_patched("dram__bytes_read.sum")


def test_a_sequence_is_placed_whole_and_its_unit_lists_its_steps_in_order():
    sequence = ProfiledCase("f::r#1", 2, frozenset({"x", "y"}), steps=("f::r#1", "f::r#2"))
    cases = [case("a", {"x"}, launches=50), sequence, case("b", {"x"}, launches=50)]
    units = spread(groups(cases, PassCounts()), cases, [0, 1], PassCounts())
    # spread over two GPUs, the two steps stay in one process, one after the other
    holding = [u for u in units if "f::r#1" in u.cases]
    assert len(holding) == 1
    at = holding[0].cases.index("f::r#1")
    assert holding[0].cases[at : at + 2] == ("f::r#1", "f::r#2")
    assert sorted(c for u in units for c in u.cases) == ["a", "b", "f::r#1", "f::r#2"]


def merged_by_rescanning(cases: list[ProfiledCase], passes: PassCounts) -> list[Group]:
    """The grouping as first written: every pair's saving worked out again after each merge."""

    def union(cluster):
        return frozenset().union(*(c.metrics for c in cluster))

    def cost(cluster):
        return (
            schedule.START_S
            + sum(c.launches for c in cluster) * passes.passes(union(cluster)) * schedule.PASS_S
        )

    def may(a, b):
        both = union(a + b)
        return not any(is_patched(m) for cl in (a, b) if any(c.pinned for c in cl) for m in both - union(cl))

    by_metrics: dict[frozenset[str], list[ProfiledCase]] = {}
    for c in cases:
        by_metrics.setdefault(c.metrics, []).append(c)
    clusters = list(by_metrics.values())
    while True:
        saving, i, j = max(
            (
                (cost(a) + cost(b) - cost(a + b), i, j)
                for i, a in enumerate(clusters)
                for j, b in enumerate(clusters)
                if i < j and may(a, b)
            ),
            default=(0.0, 0, 0),
        )
        if saving <= 0:
            break
        clusters[i] = clusters[i] + clusters[j]
        del clusters[j]
    order = {c.name: k for k, c in enumerate(cases)}
    return [
        Group(union(cl), tuple(sorted((c.name for c in cl), key=order.__getitem__)))
        for cl in sorted(clusters, key=lambda cl: min(order[c.name] for c in cl))
    ]


METRICS = [
    "dram__bytes_read.sum",
    "smsp__sass_inst_executed.sum",
    "l1tex__t_sectors.sum",
    "lts__t_sectors.sum",
    "gpu__time_duration.sum",
    "launch__grid_size",
    "sm__cycles_elapsed.max",
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sets(st.sampled_from(METRICS), max_size=4), st.integers(1, 30), st.booleans()),
        min_size=1,
        max_size=14,
    ),
    st.dictionaries(st.frozensets(st.sampled_from(METRICS), min_size=1), st.integers(1, 40), max_size=20),
)
def test_the_grouping_is_that_of_working_every_saving_out_again_after_each_merge(specs, counts):
    cases = [
        ProfiledCase(f"c{i}", launches, frozenset(m), pinned) for i, (m, launches, pinned) in enumerate(specs)
    ]
    passes = known(counts)
    assert groups(cases, passes) == merged_by_rescanning(cases, passes)


@dataclass
class AskedModel(PassModel):
    """A pass model that says what it was asked, answering as perfworks would."""

    asked: list[frozenset[str]] = field(default_factory=list)

    def passes(self, metrics) -> int:
        self.asked.append(frozenset(metrics))
        return 4

    @property
    def source(self) -> str:
        return "perfworks"


def test_what_perfworks_predicted_is_asked_once_over_runs_of_one_chip(tmp_path: Path):
    path = tmp_path / "profile" / "passes.json"
    metrics = frozenset({"l1tex__t_sectors.sum", "l1tex__t_requests.sum", "gpu__time_duration.sum"})
    first = PassCounts.load(path)
    first.model = AskedModel("GH100")
    assert first.passes(metrics) == 4 and first.passes(metrics) == 4
    assert first.model.asked == [metrics]
    assert first.save() is None
    assert sorted(p.name for p in path.parent.iterdir()) == [MARKER, "passes.json", "predicted-passes.json"]
    again = PassCounts.load(path)
    again.model = AskedModel("GH100")
    # the time takes no pass: a set of the same counters is the same question
    assert again.passes(metrics) == 4 and again.passes(metrics - {"gpu__time_duration.sum"}) == 4
    assert again.model.asked == [] and again.warnings == ()
    other_chip = PassCounts.load(path)
    other_chip.model = AskedModel("GB100")
    assert other_chip.passes(metrics) == 4 and other_chip.model.asked == [metrics]


def test_a_damaged_file_of_predictions_is_a_warning_and_asked_again(tmp_path: Path):
    path = tmp_path / "passes.json"
    (tmp_path / "predicted-passes.json").write_text('{"GH100:l1tex__a.sum": "many"}')
    passes = PassCounts.load(path)
    assert passes.predicted == {} and len(passes.warnings) == 1
    assert passes.warnings[0].startswith(f"{tmp_path}/predicted-passes.json: ignored (")
    passes.model = AskedModel("GH100")
    assert passes.passes(frozenset({"l1tex__a.sum"})) == 4 and passes.model.asked


def test_a_table_s_answer_is_not_kept(monkeypatch):
    monkeypatch.setenv("NCUVERIFY_NVPERF_HOST", "none")  # no perfworks: the table answers
    passes = PassCounts()
    passes.model = PassModel("GH100")
    assert passes.model.source == "the table of counter groups"
    assert passes.passes(frozenset({"l1tex__a.sum"})) >= 1 and passes.predicted == {}


LIMIT = "launch__occupancy_limit_registers"
SECTORS = "lts__t_sectors.sum"


def test_cases_that_need_no_ncu_share_one_process_without_it_on_the_least_busy_gpu():
    cases = [
        case("facts", {LIMIT, "launch__block_size"}),
        case("buffers", set(), launches=3),
        case("counters", {SECTORS, LIMIT}),
        ProfiledCase("timed", 1, frozenset(), pinned=True),
    ]
    placed = schedule.units(cases, (0, 1), PassCounts(), driver=True)
    with_ncu = [unit for unit in placed if unit.ncu]
    assert [(unit.gpu, unit.cases) for unit in with_ncu] == [(0, ("counters",))]
    without = [unit for unit in placed if not unit.ncu]
    assert len(without) == 1
    assert without[0].cases == ("facts", "buffers", "timed") and without[0].gpu == 1
    assert without[0].metrics == {LIMIT, "launch__block_size"}
    assert without[0].alone, "its kernel times itself: no other process on its GPU meanwhile"
    assert schedule.launch_passes(without[0], cases, PassCounts()) == 0


def test_a_sequence_or_any_metric_beyond_the_driver_s_keeps_a_case_with_ncu():
    steps = ProfiledCase("first", 2, frozenset({LIMIT}), steps=("first", "second"))
    shared_limit = case("shared", {"launch__occupancy_limit_shared_mem"})
    time = case("time", {"gpu__time_duration.sum"})
    assert all(schedule.needs_ncu(each) for each in (steps, shared_limit, time))
    assert not schedule.needs_ncu(case("facts", {LIMIT, "device__attribute_multiprocessor_count"}))
    assert all(
        unit.ncu for unit in schedule.units([steps, shared_limit, time], (0,), PassCounts(), driver=True)
    )


def test_without_the_driver_s_facts_ncu_profiles_every_case():
    cases = [case("facts", {LIMIT}), case("buffers", set())]
    for placed in (
        schedule.units(cases, (0,), PassCounts(), driver=False),
        schedule.units(cases, (0,), PassCounts()),
    ):
        assert [(unit.ncu, unit.cases) for unit in placed] == [(True, ("facts", "buffers"))]
