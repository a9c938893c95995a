#!/usr/bin/env python3
"""A deterministic stand-in for a real agent, so the experiments of tdn-tui can be tried on the
sample runs without an LLM (docs/experiments.md).

tdn-tui runs it once per sample with the experiment as JSON on stdin. It reads the run file the
experiment names, works out which context units the agent would see (the units its model steps
were sent, minus `remove`, plus `restore`), and answers from the rules of the run's scenario in
scenarios.json, beside this file: the first rule whose `present` units are all in the context,
whose `absent` units are all out of it, and (for `patch_contains`) whose replay patch holds that
text, gives the answer.

It prints a log line, then one JSON line: {"output": ..., "cost": {"loops", "tokens"}}. Loops are
the scenario's base plus one per listed unit in the context; tokens are the scenario's base plus
the context units' tokens plus a small amount that depends on the seed, as a sampled model's
output length would. The answer never depends on the seed: the scenarios are meant to give clean
verdicts. Python standard library only; no network; nothing written.
"""

import json
import os
import sys

# Extra output tokens per seed: seed 0 → 0, 1 → 7, 2 → 14, ... wrapping at 23.
TOKEN_JITTER_STEP = 7
TOKEN_JITTER_RANGE = 23


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


def unit_tokens(unit):
    tokens = unit.get("tokens")
    if isinstance(tokens, int) and tokens >= 0:
        return tokens
    return len(unit.get("text", "").split())


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
    answer = None
    for rule in scenario.get("rules", []):
        if matches(rule, ctx, spec):
            answer = rule["answer"]
            break
    if answer is None:
        fail("no rule of scenario '%s' answers this context: %s" % (run.get("id"), sorted(ctx)))

    seed = spec.get("seed", 0)
    seed = seed if isinstance(seed, int) and seed >= 0 else 0
    loops_spec = scenario.get("loops", {})
    loops = loops_spec.get("base", 1) + sum(
        extra for unit, extra in loops_spec.get("per_unit", {}).items() if unit in ctx
    )
    units = {u.get("id"): u for u in run.get("context_units", [])}
    tokens = (
        scenario.get("tokens_base", 200)
        + sum(unit_tokens(units[u]) for u in sorted(ctx) if u in units)
        + (seed * TOKEN_JITTER_STEP) % TOKEN_JITTER_RANGE
    )
    print("stand_in: %s, seed %d, %d context units" % (spec.get("experiment"), seed, len(ctx)))
    print(json.dumps({"output": answer, "cost": {"loops": loops, "tokens": tokens}}))


if __name__ == "__main__":
    main()
