#!/usr/bin/env python3
"""Generated runs for docs/performance.md, written to stdout as one JSON line.

A port of `benches/support/gen.rs` (the same fixed-seed generator, the same steps, the same
bytes), so the files measured by hand and the runs the benchmarks generate are one design:

    gen_runs.py distinct STEPS     many distinct values flowing between steps
    gen_runs.py repeating STEPS    a few hundred values, reused
    gen_runs.py vocab STEPS [--vocab 40] [--words 14-60] [--pool 300] [--digits 5] [--reuse 50]
                            [--mix 25]
        a native run whose sentences are drawn from a small vocabulary (docs/performance.md);
        the options: how many words, how many words a sentence holds, how many distinct ids,
        dates and customers, the digits of an id, how often (in percent) a step quotes a
        sentence of the last twenty instead of writing a new one, and how often a new sentence
        holds the order id (half as often a date, an amount; a quarter a customer)
    gen_runs.py otlp SPANS [the same options]
        an OTLP JSON export in the GenAI conventions: chat spans whose `gen_ai.input.messages`
        hold the system prompt and the last three messages, execute_tool spans with arguments and
        results, under one agent span

    python3 benches/support/gen_runs.py vocab 100000 > vocab-100k.json
"""

import argparse
import json
import sys

MASK = (1 << 64) - 1

# gen.rs's words
WORDS = [
    "customer", "order", "refund", "shipment", "account", "invoice", "ticket", "warehouse",
    "carrier", "payment", "address", "policy", "balance", "package", "delivery", "return",
    "exchange", "support", "status", "update",
]

# The small vocabulary: the words a support agent's text is mostly made of (gen.rs's `COMMON`).
COMMON = WORDS + [
    "the", "a", "to", "for", "and", "is", "was", "of", "on", "in",
    "with", "we", "will", "please", "your", "has", "been", "not", "can", "check",
]

SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vo", "pel", "dri", "su", "nor", "bex", "qui", "ta", "zo", "fen", "gar"]


class Rng:
    """xorshift64*, as gen.rs's `Rng`."""

    def __init__(self, seed):
        self.s = seed

    def next(self):
        s = self.s
        s ^= s >> 12
        s ^= (s << 25) & MASK
        s ^= s >> 27
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & MASK

    def below(self, n):
        return self.next() % max(n, 1)

    def word(self):
        return WORDS[self.below(len(WORDS))]


def dumps(v):
    # serde_json's compact form (keys in insertion order: the crate keeps them)
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------- gen.rs's two shapes


def new_vals(shape, i, rng):
    if shape == "repeating":
        k = i % 300
        return {
            "order": "ORD-%d" % (1000 + k),
            "cust": "cust%d@example.com" % (k % 50),
            "amount": 100 + (k % 40),
            "date": "2026-0%d-1%d" % (1 + k % 9, k % 10),
            "tracking": "1Z%010X" % k,
        }
    order = "ORD-%d" % (10_000_000 + rng.below(90_000_000))
    n = rng.below(1_000_000)
    cust = "c%d.%s@example.com" % (n, rng.word())
    amount = 100 + rng.below(99_900)
    month = 1 + rng.below(12)
    day = 1 + rng.below(28)
    tracking = "1Z%010X" % rng.below(1 << 40)
    return {"order": order, "cust": cust, "amount": amount,
            "date": "2026-%02d-%02d" % (month, day), "tracking": tracking}


def sentence(shape, v, rng):
    if shape == "repeating":
        words = WORDS[:8]
    else:
        words = [rng.word() for _ in range(6 + rng.below(6))]
    return "The %s %s for %s %s on %s." % (words[0], v["order"], v["cust"], " ".join(words[1:]), v["date"])


def gen_rs_run(shape, n):
    rng = Rng(0x9E3779B97F4A7C15)
    steps = []
    units = []
    unit_ids = []
    recent = [new_vals(shape, 0, rng)]
    for i in range(n):
        sid = "s%d" % i
        if shape == "distinct":
            frm = max(len(recent) - 20, 0)
            prev = dict(recent[frm + rng.below(len(recent) - frm)])
        else:
            prev = dict(recent[-1])
        c = i % 6
        if c == 0:
            v = new_vals(shape, i, rng)
            s = sentence(shape, v, rng)
            out = ("Please check %s for %s; it was due %s. %s I have been waiting for two weeks and "
                   "nobody answers the phone, so please tell me what happened to it.") % (
                v["order"], v["cust"], v["date"], s)
            recent.append(v)
            step = {"id": sid, "kind": "user", "output": out}
        elif c == 1:
            available = unit_ids[-6:]
            sent = available[:max(len(available) - 2, 0)]
            a = sentence(shape, prev, rng)
            b = sentence(shape, prev, rng)
            step = {"id": sid, "kind": "llm",
                    "input": "Look up %s placed by %s." % (prev["order"], prev["cust"]),
                    "output": {"thought": "I need the current state of %s before I answer; %s %s" % (prev["order"], a, b),
                               "tool_call": {"name": "get_order", "arguments": {"id": prev["order"]}}},
                    "context": {"available": available, "sent": sent},
                    "usage": {"input_tokens": 400 + i % 50, "output_tokens": 30}}
        elif c == 2:
            v = new_vals(shape, i, rng)
            note = sentence(shape, v, rng)
            step = {"id": sid, "kind": "tool",
                    "tool": {"name": "get_order", "arguments": {"id": prev["order"]}}}
            if i % 97 == 2:
                step["error"] = "order %s not found" % prev["order"]
            else:
                step["output"] = {"id": prev["order"], "total": v["amount"], "tracking": v["tracking"],
                                  "status": "shipped", "note": note}
                uid = "u%d" % i
                units.append({"id": uid, "kind": "tool_result", "text": sentence(shape, v, rng),
                              "produced_by": sid, "tokens": 20})
                unit_ids.append(uid)
            recent.append(v)
        elif c == 3:
            v = new_vals(shape, i, rng)
            doc = "doc-%d" % (i if shape == "distinct" else i % 50)
            text = ("Refund policy %d: orders like %s are refunded $%d within 30 days. %s Returns need "
                    "the original packaging and a receipt; gift cards and final-sale items are not refunded.") % (
                2020 + i % 6, v["order"], v["amount"], sentence(shape, v, rng))
            recent.append(v)
            step = {"id": sid, "kind": "retrieval", "input": "refund policy for %s" % prev["order"],
                    "documents": [{"id": doc, "text": text, "outdated": i % 12 == 3}]}
        elif c == 4:
            tool = "issue_refund" if i % 50 == 4 else "track_package"
            step = {"id": sid, "kind": "tool",
                    "tool": {"name": tool, "arguments": {"id": prev["order"], "amount": prev["amount"]}},
                    "output": "tracking %s for %s sent to %s. %s" % (
                        prev["tracking"], prev["order"], prev["cust"], sentence(shape, prev, rng))}
        else:
            step = {"id": sid, "kind": "llm", "input": "Summarise %s" % prev["order"],
                    "output": ("The refund for %s is $%d and the call is on %s. %s I will let %s know by "
                               "e-mail and close the ticket once the carrier confirms the return.") % (
                        prev["order"], prev["amount"], prev["date"], sentence(shape, prev, rng), prev["cust"])}
        steps.append(step)
    last = recent[-1] if recent else new_vals(shape, 0, rng)
    tools = []
    for t in ["get_order", "issue_refund", "track_package", "search_docs"]:
        tools.append({"name": t, "description": "%s tool" % t, "mutates": t.startswith("issue"),
                      "parameters": {"type": "object", "required": ["id"],
                                     "properties": {"id": {"type": "string"}}}})
    return {
        "format": "tdn.run/1",
        "id": "gen-%s-%d" % (shape, n),
        "status": "failed",
        "task": "Refund order %s and book a call" % (recent[0]["order"] if recent else ""),
        "final_answer": "Your refund of $%d for %s has been issued." % (last["amount"], last["order"]),
        "model": {"name": "gen", "context_window": 128_000},
        "tools": tools,
        "context_units": units,
        "steps": steps,
    }


# ---------------------------------------------------------------- the small vocabulary


def vocabulary(size):
    """`size` words: the common ones, then made-up words of two or three syllables."""
    out = list(COMMON[:size])
    k = 0
    while len(out) < size:
        n = len(SYLLABLES)
        w = SYLLABLES[k % n] + SYLLABLES[(k // n) % n]
        if k >= n * n:
            w += SYLLABLES[(k // (n * n)) % n]
        out.append(w)
        k += 1
    return out


class Talk:
    """Sentences of a small vocabulary with ids, dates, customers and amounts in them, and the
    last twenty sentences written, which later steps quote (gen.rs's `Talk`)."""

    def __init__(self, rng, p):
        self.rng = rng
        self.p = p
        self.words = vocabulary(p.vocab)
        self.recent = []

    def pick(self, n):
        return self.rng.below(n)

    def order(self, k):
        return "ORD-%0*d" % (self.p.digits, (k * 7919) % (10 ** self.p.digits))

    def date(self, k):
        return "2026-%02d-%02d" % (1 + k % 12, 1 + (k // 12) % 28)

    def cust(self, k):
        return "cust%d@example.com" % k

    def fact(self):
        """The ids, date, customer and amount a step speaks of."""
        pool = self.p.pool
        return {"order": self.order(self.pick(pool)), "date": self.date(self.pick(pool)),
                "cust": self.cust(self.pick(pool)), "amount": 100 + self.pick(99_900)}

    def fresh(self, f):
        """A new sentence: words of the vocabulary, with the fact's values among them."""
        lo, hi = self.p.words
        n = lo + self.pick(hi - lo + 1)
        words = [self.words[self.pick(len(self.words))] for _ in range(n)]
        for key, part in (("order", 1), ("date", 2), ("amount", 2), ("cust", 4)):
            if self.pick(100) < self.p.mix // part:
                v = f[key]
                words[self.pick(n)] = ("$%d" % v) if key == "amount" else v
        s = " ".join(words)
        s = s[0].upper() + s[1:] + "."
        self.recent.append(s)
        if len(self.recent) > 20:
            self.recent.pop(0)
        return s

    def say(self, f):
        """A sentence quoted from the last twenty (`reuse` percent of the time), else a new one."""
        if self.recent and self.pick(100) < self.p.reuse:
            return self.recent[self.pick(len(self.recent))]
        return self.fresh(f)


def vocab_run(n, p):
    rng = Rng(0x2545F4914F6CDD1D)
    talk = Talk(rng, p)
    steps = []
    units = []
    unit_ids = []
    f = talk.fact()
    for i in range(n):
        sid = "s%d" % i
        c = i % 6
        if c == 0:
            f = talk.fact()
            out = talk.fresh(f)
            if talk.pick(2) == 0:
                out += " " + talk.say(f)
            step = {"id": sid, "kind": "user", "output": out}
        elif c == 1:
            available = unit_ids[-6:]
            sent = available[:max(len(available) - 2, 0)]
            step = {"id": sid, "kind": "llm",
                    "input": "Look up %s for %s. %s" % (f["order"], f["cust"], talk.say(f)),
                    "output": {"thought": talk.say(f),
                               "tool_call": {"name": "get_order", "arguments": {"id": f["order"]}}},
                    "context": {"available": available, "sent": sent},
                    "usage": {"input_tokens": 400 + i % 50, "output_tokens": 30}}
        elif c == 2:
            step = {"id": sid, "kind": "tool",
                    "tool": {"name": "get_order", "arguments": {"id": f["order"]}}}
            if i % 97 == 2:
                step["error"] = "order %s not found" % f["order"]
            else:
                step["output"] = {"id": f["order"], "total": f["amount"], "date": f["date"],
                                  "note": talk.fresh(f)}
                uid = "u%d" % i
                units.append({"id": uid, "kind": "tool_result", "text": talk.say(f),
                              "produced_by": sid, "tokens": 40})
                unit_ids.append(uid)
        elif c == 3:
            doc = "doc-%d" % talk.pick(p.pool)
            step = {"id": sid, "kind": "retrieval", "input": "policy for %s" % f["order"],
                    "documents": [{"id": doc, "text": talk.fresh(f) + " " + talk.say(f),
                                   "outdated": i % 12 == 3}]}
        elif c == 4:
            key = "case/%s" % f["order"]
            if i % 12 == 4:
                step = {"id": sid, "kind": "memory_write", "memory": {"key": key, "value": talk.say(f)}}
            else:
                step = {"id": sid, "kind": "memory_read", "memory": {"key": key, "value": talk.say(f)}}
        else:
            step = {"id": sid, "kind": "llm", "input": talk.say(f),
                    "output": "The refund of $%d for %s is due %s. %s" % (
                        f["amount"], f["order"], f["date"], talk.fresh(f))}
        steps.append(step)
    tools = []
    for t in ["get_order", "issue_refund"]:
        tools.append({"name": t, "description": "%s tool" % t, "mutates": t.startswith("issue"),
                      "parameters": {"type": "object", "required": ["id"],
                                     "properties": {"id": {"type": "string"}}}})
    return {
        "format": "tdn.run/1",
        "id": "gen-vocab-%d" % n,
        "status": "failed",
        "task": "Refund order %s" % talk.order(0),
        "final_answer": "Your refund of $%d for %s has been issued." % (f["amount"], f["order"]),
        "model": {"name": "gen", "context_window": 128_000},
        "tools": tools,
        "context_units": units,
        "steps": steps,
    }


# ---------------------------------------------------------------- OTLP


def attr(key, value):
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def text_message(role, content):
    return {"role": role, "parts": [{"type": "text", "content": content}]}


SYSTEM = ("You are the support agent of an online shop. Answer the customer's question about an "
          "order, a refund or a delivery; look the order up before you answer, never promise a "
          "refund the policy does not allow, and keep every answer short and polite.")


def otlp_export(n, p):
    rng = Rng(0x9E3779B97F4A7C15 ^ 0x5DEECE66D)
    talk = Talk(rng, p)
    trace = "%032x" % 0x4BF92F3577B34DA6A3CE929D0E0E4736
    root = "%016x" % 1
    t0 = 1_767_225_600_000_000_000
    spans = [{"traceId": trace, "spanId": root, "name": "invoke_agent support",
              "kind": 1, "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + (n + 1) * 1_000_000),
              "attributes": [attr("gen_ai.operation.name", "invoke_agent"),
                             attr("gen_ai.agent.name", "support")],
              "status": {}}]
    history = []
    f = talk.fact()
    call = 0
    i = 1
    while i < n:
        start = t0 + i * 1_000_000
        if not history or talk.pick(3) == 0:
            f = talk.fact()
            history.append(text_message("user", talk.say(f)))
        call += 1
        call_id = "call_%d" % call
        args = {"id": f["order"], "date": f["date"]}
        out = [{"role": "assistant", "parts": [
            {"type": "text", "content": talk.say(f)},
            {"type": "tool_call", "id": call_id, "name": "get_order", "arguments": args}],
            "finish_reason": "tool_call"}]
        shown = [text_message("system", SYSTEM)] + history[-3:]
        spans.append({"traceId": trace, "spanId": "%016x" % (i + 1), "parentSpanId": root,
                      "name": "chat gen-1", "kind": 3,
                      "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 900_000),
                      "attributes": [attr("gen_ai.operation.name", "chat"),
                                     attr("gen_ai.request.model", "gen-1"),
                                     attr("gen_ai.input.messages", dumps(shown)),
                                     attr("gen_ai.output.messages", dumps(out)),
                                     attr("gen_ai.usage.input_tokens", 300 + 40 * len(shown)),
                                     attr("gen_ai.usage.output_tokens", 60)],
                      "status": {}})
        history.append(out[0])
        i += 1
        if i >= n:
            break
        start = t0 + i * 1_000_000
        result = {"id": f["order"], "total": f["amount"], "date": f["date"], "note": talk.fresh(f)}
        spans.append({"traceId": trace, "spanId": "%016x" % (i + 1), "parentSpanId": root,
                      "name": "execute_tool get_order", "kind": 1,
                      "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 400_000),
                      "attributes": [attr("gen_ai.operation.name", "execute_tool"),
                                     attr("gen_ai.tool.name", "get_order"),
                                     attr("gen_ai.tool.call.id", call_id),
                                     attr("gen_ai.tool.call.arguments", dumps(args)),
                                     attr("gen_ai.tool.call.result", dumps(result))],
                      "status": {}})
        history.append({"role": "tool", "parts": [
            {"type": "tool_call_response", "id": call_id, "response": dumps(result)}]})
        i += 1
    return {"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", "support-agent")]},
        "scopeSpans": [{"scope": {"name": "gen"}, "spans": spans}]}]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shape", choices=["distinct", "repeating", "vocab", "otlp"])
    ap.add_argument("steps", type=int)
    ap.add_argument("--vocab", type=int, default=40)
    ap.add_argument("--words", default="14-60")
    ap.add_argument("--pool", type=int, default=300)
    ap.add_argument("--digits", type=int, default=5)
    ap.add_argument("--reuse", type=int, default=50)
    ap.add_argument("--mix", type=int, default=25)
    p = ap.parse_args()
    lo, hi = (int(x) for x in p.words.split("-"))
    if not (1 <= lo <= hi) or p.vocab < 1 or p.pool < 1 or p.digits < 1:
        ap.error("need 1 <= words' low <= high, and a vocabulary, pool and digits of 1 or more")
    p.words = (lo, hi)
    if p.shape in ("distinct", "repeating"):
        v = gen_rs_run(p.shape, p.steps)
    elif p.shape == "vocab":
        v = vocab_run(p.steps, p)
    else:
        v = otlp_export(p.steps, p)
    sys.stdout.write(dumps(v))


if __name__ == "__main__":
    main()
