"""The Python side of the cross-language test: one process on the shared
table, driven line by line by run.py (protocol in crosslang/README.md)."""

import json
import sys
import time

import sds


# The keyed limit every worker opens beside the table (README's `decide`).
KEY_RULE = '{"kind":"fixedWindow","limit":5,"periodMs":60000}'
KEY_CAPACITY = 64


def main() -> None:
    path, capacity = sys.argv[1], int(sys.argv[2])
    client = sds.Client.shared(path, capacity=capacity)
    keys = sds.KeyedLimit.shared(path + ".keys", KEY_RULE, capacity=KEY_CAPACITY)
    held = []
    print("ready", flush=True)
    for line in sys.stdin:
        command, *args = line.split(" ", 2)
        if command == "strategy":
            client.set_strategy(args[0], args[1].strip())
            reply = "ok"
        elif command == "add":
            point, visits, errors, now_ms = args[0], *map(int, args[1].split())
            for i in range(visits):
                entry = client.enter(point, now_ms=now_ms)
                if i < errors:
                    entry.error(RuntimeError("counted"))
                entry.exit(now_ms)
            reply = "ok"
        elif command in ("try", "hold"):
            point, tries, now_ms, *start = args[0], *map(int, args[1].split())
            while start and time.monotonic_ns() < start[0]:
                pass
            admitted = 0
            for _ in range(tries):
                entry = client.enter(point, now_ms=now_ms)
                admitted += not entry.downgraded
                if command == "hold" and not entry.downgraded:
                    held.append(entry)
                else:
                    entry.exit(now_ms)
            reply = str(admitted)
        elif command == "release":
            for entry in held:
                entry.exit(int(args[0]))
            reply = str(len(held))
            held.clear()
        elif command == "decide":
            key, tries, now_ms = args[0], *map(int, args[1].split())
            reply = str(sum(keys.decide(key, 1, now_ms).admitted for _ in range(tries)))
        elif command == "metrics":
            reply = json.dumps(client.prometheus_text(now_ms=int(args[0])))
        elif command == "stats":
            stats = client.stats(args[0], now_ms=int(args[1]))
            reply = json.dumps([stats[k] for k in ("visit", "exception", "timeout", "downgrade", "concurrent")])
        else:
            raise SystemExit(f"unknown command {line!r}")
        print(reply, flush=True)


if __name__ == "__main__":
    main()
