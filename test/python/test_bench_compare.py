"""bench/compare.py: a suite run's JSON read against issue 4's targets."""

import json
import os
import sys

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import compare  # noqa: E402


def _row(us, frac, eager=None, comp=None):
    return {"kfuse_us": us, "kfuse_frac": frac,
            "eager_us": us * 2 if eager is None else eager,
            "compile_us": us * 1.5 if comp is None else comp}


def _run(workloads):
    return {"date": "2026-11-24T00:00:00", "device": "test GPU", "copy_GBps": 3000.0,
            "workloads": workloads}


def _all_met():
    return {name: _row(100.0, 0.99) for name in compare.ISSUE_TABLE}


def test_every_target_met():
    lines, missed = compare.compare(_run(_all_met()))
    assert missed == 0
    assert lines[-1] == f"issue-table workloads missing a target: 0 of {len(compare.ISSUE_TABLE)}"


def test_each_way_to_miss_a_target_is_named():
    rows = _all_met()
    rows["ew_chain"] = _row(100.0, 0.95)                    # below 0.96
    rows["softmax_w32768"] = _row(100.0, 0.93)              # below 0.94
    rows["softmax_w262144"] = _row(100.0, 0.91)             # 0.90 there: met
    rows["layernorm"] = _row(100.0, 0.98, comp=99.0)        # torch.compile faster
    rows["l2norm"] = _row(100.0, 0.98, eager=100.0)         # level with eager: not faster
    del rows["softmax_xent"]                                # not run
    lines, missed = compare.compare(_run(rows))
    assert missed == 5
    text = "\n".join(lines)
    assert "| ew_chain | 100.0 | 0.950 | 0.96 |" in text and "0.950 < 0.96 of copy BW" in text
    assert "0.930 < 0.94 of copy BW" in text
    assert "| softmax_w262144 | 100.0 | 0.910 | 0.90 | 200.0 | 150.0 | yes |" in text
    assert "not faster than torch.compile (100.0 vs 99.0 us)" in text
    assert "not faster than eager (100.0 vs 100.0 us)" in text
    assert "| softmax_xent | - | - | 0.94 | - | - | not run |" in text


def test_variants_faster_than_their_default_are_marked():
    rows = _all_met()
    rows["softmax__c8"] = _row(99.0, 1.0)      # 1% faster: marked
    rows["softmax__c16"] = _row(99.8, 1.0)     # 0.2%: within the slack
    rows["gone__x"] = _row(50.0, 1.0)          # its default was not run
    rows["softmax__tuned"] = dict(_row(98.0, 1.0), tuned_choice="row_chunks=0")
    rows["layernorm__tuned"] = dict(_row(100.0, 1.0), tuned_choice="default")
    lines, _ = compare.compare(_run(rows))
    text = "\n".join(lines)
    assert ("| softmax__tuned | 98.0 | 100.0 | -2.0% | faster than the default; the "
            "runtime chose row_chunks=0 |") in text
    assert "| layernorm__tuned | 100.0 | 100.0 | +0.0% | the runtime chose default |" in text
    assert "| softmax__c8 | 99.0 | 100.0 | -1.0% | faster than the default |" in text
    assert "| softmax__c16 | 99.8 | 100.0 | -0.2% |  |" in text
    assert "| gone__x | 50.0 | - | - | no default run |" in text
    # variants never count as workloads of the table
    assert compare.compare(_run(rows))[1] == 0


def test_before_run_compared(tmp_path, capsys):
    new, old = _all_met(), _all_met()
    old["softmax"] = _row(110.0, 0.9)
    pn, po = tmp_path / "new.json", tmp_path / "old.json"
    pn.write_text(json.dumps(_run(new)))
    po.write_text(json.dumps(dict(_run(old), date="2026-11-20")))
    assert compare.main([str(pn), "--before", str(po)]) == 0
    out = capsys.readouterr().out
    assert "| softmax | 100.0 | 110.0 | -9.1% |" in out


def test_bad_input_is_refused_with_a_message(tmp_path, capsys):
    assert compare.main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read a suite run" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"results": []}))
    assert compare.main([str(bad)]) == 2
    assert "no 'workloads' table" in capsys.readouterr().err
    bad.write_text("{not json")
    assert compare.main([str(bad)]) == 2


def test_rounds_and_the_default_timed_in_turn_are_used():
    rows = _all_met()
    rows["layernorm"] = dict(_row(100.0, 0.98, comp=99.5), ahead_of_compile_rounds=1,
                             rounds_us={"kfuse": [99.0, 101.0, 100.5, 100.2],
                                        "compile": [99.4, 99.6, 99.5, 99.5]})
    # (the variant's default, timed in the same rounds, is 98.0: not the
    # workload row's 100.0)
    rows["softmax__c8"] = dict(_row(99.0, 1.0), default_us=98.0)
    text = "\n".join(compare.compare(_run(rows))[0])
    assert "not faster than torch.compile (100.0 vs 99.5 us, ahead in 1 of 4 rounds)" in text
    assert "| softmax__c8 | 99.0 | 98.0 | +1.0% |  |" in text


class _FakeCuda:
    """torch.cuda's events over a clock that the timed calls advance by
    their given time, each call logged."""

    def __init__(self):
        self.now = 0.0
        self.log = []
        cuda = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                self.t = cuda.now

            def elapsed_time(self, end):
                return (end.t - self.t) / 1e3       # ms, as torch gives it

        self.Event = Event

    def synchronize(self):
        pass


def test_peers_take_turns_in_reversed_order_every_other_round():
    import types

    from bench_ew_chain import interleaved_us
    fake = _FakeCuda()
    torch = types.SimpleNamespace(cuda=fake)

    def timed(name, us):
        def call():
            fake.log.append(name)
            fake.now += us
        return call
    # (each round's calls of one callable are timed together, the callables
    # in turn, the order reversed every other round; the medians pool them)
    meds, rounds = interleaved_us(torch, {"kfuse": timed("kfuse", 100.0),
                                          "compile": timed("compile", 101.0)},
                                  reps=3, rounds=4, warmup=2)
    order = [n for i, n in enumerate(fake.log) if i >= 4][::3]   # (after the warmups)
    assert order == ["kfuse", "compile", "compile", "kfuse", "kfuse", "compile",
                     "compile", "kfuse"]
    assert meds == {"kfuse": 100.0, "compile": 101.0}
    assert rounds == {"kfuse": [100.0] * 4, "compile": [101.0] * 4}
