#!/usr/bin/env python3
"""A task handled by a plain Python script under `npx gaffer agent` (docs/command-agent.md).

    npx gaffer agent --role writer -- python3 examples/command-agent/summarise.py

It reads the task from stdin (the same JSON is in $GAFFER_PAYLOAD_FILE), reports progress and a
checkpoint with control lines (`::gaffer:<token>:: {…}`, the token being this attempt's
$GAFFER_CONTROL_TOKEN, so text it prints cannot pass for one), writes its result to $GAFFER_OUTPUT_FILE, and says how it
ended with its exit status: 0 done, 75 try again later, 65 cannot be done, 77 needs a human.
"""
import json
import os
import sys

EX_OK, EX_DATAERR, EX_TEMPFAIL, EX_NOPERM = 0, 65, 75, 77


def gaffer(**message):
    """One control line, signed with this attempt's token (flushed at once so Gaffer sees it while we run)."""
    print(f"::gaffer:{os.environ.get('GAFFER_CONTROL_TOKEN', '')}:: " + json.dumps(message), flush=True)


def main():
    work = json.load(sys.stdin)
    payload = work.get("payload") or {}
    text = payload.get("text")
    if not isinstance(text, str):
        print("the task's payload needs a \"text\" string", file=sys.stderr)
        return EX_DATAERR
    if payload.get("needsApproval"):
        print("this one needs a person to look at it first", file=sys.stderr)
        return EX_NOPERM

    words = text.split()
    gaffer(progress=0.5, message=f"{len(words)} words read")
    summary = " ".join(words[:12]) + ("…" if len(words) > 12 else "")
    gaffer(step="summarised")
    gaffer(usage={"inputTokens": len(words), "outputTokens": min(len(words), 12)})

    with open(os.environ["GAFFER_OUTPUT_FILE"], "w") as out:
        json.dump({"summary": summary, "words": len(words), "attempt": int(os.environ["GAFFER_ATTEMPT"])}, out)
    print(f"summarised task {os.environ.get('GAFFER_TASK_ID', '?')}: {summary}")
    return EX_OK


if __name__ == "__main__":
    sys.exit(main())
