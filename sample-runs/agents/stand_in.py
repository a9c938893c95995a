#!/usr/bin/env python3
"""A deterministic stand-in for a real agent, so the experiments of tdn-tui can be tried on the
sample runs without an LLM (docs/experiments.md).

tdn-tui runs it once per sample with the experiment as JSON on stdin. It reads the run file the
experiment names, works out which context units the agent would see (the units its model steps
were sent, minus `remove`, plus `restore`), and answers from the rules of the run's scenario in
scenarios.json, beside this file. It prints one JSON line: {"output": ..., "cost": {"loops",
"tokens"}}. Python standard library only; no network; the seed is read but, being deterministic,
the agent gives the same answer for every seed (a real agent would pass the seed on).
"""

import json
import os
import sys


def fail(message):
    print("stand_in.py: " + message, file=sys.stderr)
    sys.exit(2)


def context_of(run, spec):
    """The unit ids the agent sees: every id sent to an llm step (all units when no step records
    context), minus the removed ones, plus the restored ones."""
    units = [u.get("id") for u in run.get("context_units", [])]
    sent, recorded = [], False
    for step in run.get("steps", []):
        ctx = step.get("context")
        if step.get("kind") == "llm" and isinstance(ctx, dict):
            recorded = True
            sent.extend(ctx.get("sent", []))
    seen = set(sent) if recorded else set(units)
    return (seen - set(spec.get("remove", []))) | set(spec.get("restore", []))


def matches(rule, ctx, spec):
    if any(u not in ctx for u in rule.get("present", [])):
        return False
    if any(u in ctx for u in rule.get("absent", [])):
        return False
    if "patch_contains" in rule:
        patch = spec.get("patch") or ""
        if spec.get("experiment") != "replay" or rule["patch_contains"] not in patch:
            return False
    return True


def main():
    try:
        spec = json.load(sys.stdin)
    except ValueError as e:
        fail("stdin is not the experiment JSON: %s" % e)
    try:
        with open(spec["run"], encoding="utf-8") as f:
            run = json.load(f)
    except (OSError, ValueError, KeyError) as e:
        fail("cannot read the run named by the experiment: %s" % e)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "scenarios.json"), encoding="utf-8") as f:
        scenarios = json.load(f)
    scenario = scenarios.get(run.get("id"))
    if scenario is None:
        fail("no scenario for run '%s' in scenarios.json" % run.get("id"))

    ctx = context_of(run, spec)
    answer = run.get("final_answer", "")
    for rule in scenario.get("rules", []):
        if matches(rule, ctx, spec):
            # A rule gives its answer, or names the run's field that holds it ("final_answer",
            # "reference_answer"), so one scenario serves every recording of the same run.
            if "answer" in rule:
                answer = rule["answer"]
            else:
                answer = run.get(rule.get("answer_from", "final_answer")) or ""
            break

    loops_spec = scenario.get("loops", {})
    loops = loops_spec.get("base", 1) + sum(
        extra for unit, extra in loops_spec.get("per_unit", {}).items() if unit in ctx
    )
    texts = {u.get("id"): u.get("text", "") for u in run.get("context_units", [])}
    tokens = scenario.get("tokens_base", 200) + sum(len(texts.get(u, "")) // 4 for u in sorted(ctx))
    print(json.dumps({"output": answer, "cost": {"loops": loops, "tokens": tokens}}))


if __name__ == "__main__":
    main()
