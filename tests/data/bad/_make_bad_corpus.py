"""Regenerate the bad-input corpus and its manifest EXPECTED.json (run from the repo root).

    python tests/data/bad/_make_bad_corpus.py

Every file is a small hand-made breakage of a valid trace; EXPECTED.json maps the file
name to the problem code that must be reported and the CLI exit code of
``orchestrace validate``. Big inputs (a 100 MB string, 10,000-deep nesting) are generated
at test time instead (tests/cli/test_cli_bad_corpus.py).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def native() -> dict[str, Any]:
    """A small valid native trace: spawn, tool call/result, return, aggregate, stop."""
    ev = [
        {"id": "d0", "t": 0.0, "t_end": 0.5, "type": "orchestrator_decision", "agent": "orchestrator",
         "decision": {"kind": "spawn", "action": "spawn:w1", "alternatives": ["spawn:w1", "none"]}},
        {"id": "s1", "t": 1.0, "type": "spawn", "agent": "orchestrator", "to": "w1"},
        {"id": "c1", "t": 2.0, "t_end": 3.0, "type": "tool_call", "agent": "w1", "tool": "search",
         "tokens_in": 40, "tokens_out": 10, "cost": 0.01},
        {"id": "r1", "t": 3.0, "type": "tool_result", "agent": "w1", "tool": "search", "trusted": False},
        {"id": "m1", "t": 3.5, "type": "message", "agent": "w1", "from": "w1", "to": "orchestrator"},
        {"id": "ret", "t": 4.0, "type": "return", "agent": "w1", "from": "w1", "to": "orchestrator"},
        {"id": "agg", "t": 5.0, "type": "aggregate", "agent": "orchestrator", "outcome": {"success": True}},
        {"id": "stop", "t": 6.0, "type": "orchestrator_decision", "agent": "orchestrator",
         "decision": {"kind": "stop", "action": "stop", "alternatives": ["stop", "continue"]}},
    ]
    ed = [["d0", "s1", "spawn"], ["s1", "c1", "causal"], ["c1", "r1", "tool_dependency"],
          ["r1", "m1", "causal"], ["m1", "ret", "causal"], ["ret", "agg", "return"],
          ["agg", "stop", "causal"], ["c1", "m1", "temporal"]]
    return {"trace_id": "bad-corpus", "task_id": "demo", "schema_version": "1.0", "topology": "centralized",
            "events": ev, "edges": [{"src": s, "dst": d, "type": k} for s, d, k in ed],
            "rewards": {"team": 1.0}, "costs": {"tokens": 50.0, "wall_clock_s": 6.0}}


def reference() -> dict[str, Any]:
    """The survey's example trace (CC0), see tests/data/reference/."""
    return json.loads((HERE.parent / "reference" / "example_trace.json").read_text())


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, indent=1).encode()


def jsonl(tr: dict[str, Any]) -> list[bytes]:
    head = {k: tr[k] for k in ("trace_id", "task_id", "schema_version", "topology")}
    lines = [{"header": head}] + [{"event": e} for e in tr["events"]] + [{"edge": e} for e in tr["edges"]]
    lines.append({"end": {"rewards": tr["rewards"], "costs": tr["costs"]}})
    return [json.dumps(x).encode() for x in lines]


def build() -> dict[str, tuple[bytes, str | None, int]]:
    """name → (content, expected code, expected exit)."""
    out: dict[str, tuple[bytes, str | None, int]] = {}

    def mut(name: str, code: str | None, exit: int, f: Any, base: Any = native) -> None:
        tr = copy.deepcopy(base())
        f(tr)  # mutates in place
        out[name] = (dumps(tr), code, exit)

    good = dumps(native())
    # --- not JSON / encodings --------------------------------------------------------------
    out["not_json.json"] = (b"hello, this is not json\n", "json.malformed", 1)
    out["empty.json"] = (b"", "json.empty", 1)
    out["whitespace_only.json"] = (b"  \n\t \n", "json.empty", 1)
    out["bom_valid.json"] = (b"\xef\xbb\xbf" + good, "json.bom", 0)
    out["bom_then_truncated.json"] = (b"\xef\xbb\xbf" + good[:40], "json.truncated", 1)
    out["invalid_utf8.json"] = (good.replace(b'"search"', b'"sea\xffrch"', 1), "json.invalid-utf8", 1)
    out["utf16.json"] = (good.decode().encode("utf-16"), "json.invalid-utf8", 1)
    out["truncated_document.json"] = (good[: len(good) // 2], "json.truncated", 1)
    out["trailing_comma.json"] = (good.replace(b'"team": 1.0', b'"team": 1.0,', 1), "json.malformed", 1)
    out["trailing_garbage.json"] = (good + b" xyz", "json.malformed", 1)
    out["nan_literal.json"] = (good.replace(b'"t": 2.0', b'"t": NaN', 1), "json.malformed", 1)
    out["infinity_literal.json"] = (good.replace(b'"team": 1.0', b'"team": Infinity', 1), "json.malformed", 1)
    out["deep_nesting_2000.json"] = (good[:-2] + b', "meta": {"x": ' + b"[" * 2000 + b"]" * 2000 + b"}}",
                                     "json.too-deep", 1)
    # --- wrong top level / missing / wrong types --------------------------------------------
    out["top_level_array.json"] = (b"[" + good + b"]", "schema.type", 1)
    out["top_level_string.json"] = (b'"a trace"', "schema.type", 1)
    out["top_level_number.json"] = (b"42", "schema.type", 1)
    out["top_level_null.json"] = (b"null", "schema.type", 1)
    mut("missing_trace_id.json", "schema.missing-field", 1, lambda t: t.pop("trace_id"))
    mut("missing_events.json", "schema.missing-field", 1, lambda t: t.pop("events"))
    mut("event_missing_type.json", "schema.missing-field", 1, lambda t: t["events"][2].pop("type"))
    mut("edge_missing_dst.json", "schema.missing-field", 1, lambda t: t["edges"][1].pop("dst"))
    mut("t_is_string.json", "schema.type", 1, lambda t: t["events"][1].update(t="1.0"))
    mut("t_is_bool.json", "schema.type", 1, lambda t: t["events"][1].update(t=True))
    mut("events_is_object.json", "schema.type", 1, lambda t: t.update(events={"e1": {}}))
    mut("event_is_list.json", "schema.type", 1, lambda t: t["events"].__setitem__(0, ["d0", 0.0]))
    mut("edge_src_is_int.json", "schema.type", 1, lambda t: t["edges"][0].update(src=7))
    mut("tokens_is_float.json", "schema.type", 1, lambda t: t["events"][2].update(tokens_in=1.5))
    mut("reward_is_string.json", "schema.type", 1, lambda t: t["rewards"].update(team="high"))
    # --- unknown enums / fields -------------------------------------------------------------
    mut("unknown_event_type.json", "schema.enum", 1, lambda t: t["events"][2].update(type="tool_cal"))
    mut("unknown_edge_type.json", "schema.enum", 1, lambda t: t["edges"][1].update(type="casual"))
    mut("unknown_topology.json", "schema.enum", 1, lambda t: t.update(topology="centralised"))
    mut("unknown_decision_kind.json", "schema.enum", 1, lambda t: t["events"][7]["decision"].update(kind="stopp"))
    mut("unknown_trace_field.json", "schema.unknown-field", 1, lambda t: t.update(rewardz={"team": 1.0}))
    mut("edge_extra_field.json", "schema.unknown-field", 1, lambda t: t["edges"][0].update(weight=1))
    # --- semantic ---------------------------------------------------------------------------
    mut("duplicate_ids.json", "id.duplicate", 1, lambda t: t["events"][3].update(id="c1"))
    mut("empty_event_id.json", "id.empty", 1, lambda t: t["events"][4].update(id="") or t["edges"].pop())
    mut("dangling_edge.json", "edge.dangling", 1, lambda t: t["edges"][2].update(dst="r9"))
    mut("cycle.json", "edge.cycle", 1, lambda t: t["edges"].append({"src": "ret", "dst": "c1", "type": "causal"}))
    mut("self_loop.json", "edge.cycle", 1, lambda t: t["edges"].append({"src": "c1", "dst": "c1", "type": "causal"}))
    mut("equal_time_cycle.json", "edge.cycle", 1, lambda t: [
        t["events"][3].update(t=2.0), t["edges"].append({"src": "r1", "dst": "c1", "type": "causal"})])
    mut("time_backwards.json", "edge.time-backwards", 1, lambda t: t["events"][3].update(t=1.5))
    mut("end_before_start.json", "event.end-before-start", 1, lambda t: t["events"][2].update(t_end=1.9))
    mut("activity_before_spawn.json", "agent.before-spawn", 1, lambda t: t["events"][1].update(t=2.5))
    mut("return_to_wrong_agent.json", "return.wrong-target", 1, lambda t: t["events"][5].update(to="w7"))
    mut("two_stops.json", "stop.multiple", 1, lambda t: t["events"][0]["decision"].update(kind="stop"))
    mut("event_after_stop.json", "stop.has-successor", 1, lambda t: [
        t["events"].append({"id": "late", "t": 7.0, "type": "message", "agent": "orchestrator"}),
        t["edges"].append({"src": "stop", "dst": "late", "type": "causal"})])
    mut("negative_event_cost.json", "cost.negative", 1, lambda t: t["events"][2].update(cost=-0.5))
    mut("negative_tokens.json", "cost.negative", 1, lambda t: t["events"][2].update(tokens_out=-3))
    mut("negative_trace_cost.json", "cost.negative", 1, lambda t: t["costs"].update(tokens=-1.0))
    out["number_beyond_float.json"] = (good.replace(b'"t": 2.0', b'"t": 1e400', 1), "number.non-finite", 1)
    out["reward_beyond_float.json"] = (good.replace(b'"team": 1.0', b'"team": -1e999', 1), "number.non-finite", 1)
    # --- warnings only (exit 0) -------------------------------------------------------------
    mut("unknown_schema_version.json", "version.unknown", 0, lambda t: t.update(schema_version="9.9"))
    mut("decision_on_message.json", "decision.misplaced", 0,
        lambda t: t["events"][4].update(decision={"kind": "communicate", "action": "send"}))
    mut("native_event_extra_field.json", "schema.unknown-field", 0, lambda t: t["events"][2].update(tokens_inn=5))
    # --- reference form (no schema_version) ------------------------------------------------
    mut("reference_missing_costs.json", "reference.missing-field", 1, lambda t: t.pop("costs"), reference)
    mut("reference_missing_wall_clock.json", "reference.missing-field", 1,
        lambda t: t["costs"].pop("wall_clock_s"), reference)
    mut("reference_no_edges.json", "reference.missing-field", 1, lambda t: t.pop("edges"), reference)
    mut("reference_empty_events.json", "reference.empty-events", 1,
        lambda t: [t.update(events=[]), t.update(edges=[])], reference)
    mut("reference_negative_time.json", "reference.negative-time", 1, lambda t: t["events"][0].update(t=-1), reference)
    mut("reference_empty_agent.json", "reference.empty-string", 1, lambda t: t["events"][3].update(agent=""), reference)
    mut("reference_extra_collides.json", "reference.extra-moved", 0,
        lambda t: t["events"][4].update(error="oops", cost="high"), reference)
    # --- JSONL streams ----------------------------------------------------------------------
    lines = jsonl(native())
    out["stream_truncated.jsonl"] = (b"\n".join(lines[:-1]) + b"\n" + lines[-1][: len(lines[-1]) // 2],
                                     "jsonl.truncated", 0)
    out["stream_no_end.jsonl"] = (b"\n".join(lines[:-1]) + b"\n", "jsonl.no-end", 0)
    out["stream_no_header.jsonl"] = (b"\n".join(lines[1:]) + b"\n", "jsonl.no-header", 1)
    out["stream_bad_record.jsonl"] = (b"\n".join(lines[:3] + [b'{"evnt": {"id": "x"}}'] + lines[3:]) + b"\n",
                                      "jsonl.bad-record", 1)
    bad_enum = lines[3].replace(b'"tool_call"', b'"tool-call"')
    out["stream_bad_event.jsonl"] = (b"\n".join(lines[:3] + [bad_enum] + lines[4:]) + b"\n", "schema.enum", 1)
    out["stream_malformed_middle.jsonl"] = (b"\n".join(lines[:4] + [lines[4][:-5]] + lines[5:]) + b"\n",
                                            "json.malformed", 1)
    cyc = json.dumps({"edge": {"src": "agg", "dst": "c1", "type": "causal"}}).encode()
    out["stream_cycle.jsonl"] = (b"\n".join(lines[:-1] + [cyc, lines[-1]]) + b"\n", "edge.cycle", 1)
    return out


def main() -> None:
    corpus = build()
    for old in HERE.glob("*.json*"):
        if old.name != "EXPECTED.json":
            old.unlink()
    manifest = {}
    for name, (data, code, exit) in sorted(corpus.items()):
        (HERE / name).write_bytes(data)
        manifest[name] = {"code": code, "exit": exit}
    (HERE / "EXPECTED.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(corpus)} files")


if __name__ == "__main__":
    main()
