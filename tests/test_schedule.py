"""Which ncu process profiles which case: grouping by metrics, merging when it saves, spreading over GPUs."""

from pathlib import Path

from ncuverify.schedule import Group, PassCounts, ProfiledCase, groups, spread


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


def test_unknown_metric_sets_get_a_guess_and_known_ones_ncu_s_count(tmp_path: Path):
    passes = PassCounts.load(tmp_path / "profile" / "passes.json")
    counters = frozenset({"l1tex__a.sum", "l1tex__b.sum", "lts__c.sum", "dram__d.sum"})
    assert passes.passes(frozenset({"launch__registers_per_thread", "gpu__time_duration.sum"})) == 1
    assert passes.passes(counters) == 3  # one, plus one per three counters
    passes.remember(counters, 5)
    passes.save()
    assert PassCounts.load(tmp_path / "profile" / "passes.json").passes(counters) == 5


def test_a_damaged_pass_file_only_costs_a_guess(tmp_path: Path):
    path = tmp_path / "passes.json"
    path.write_text("{not json")
    assert PassCounts.load(path).passes(frozenset({"l1tex__a.sum"})) == 2


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
