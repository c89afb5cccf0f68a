"""The Python side of the cross-language test: one process on the shared
table, driven line by line by run.py (protocol in crosslang/README.md)."""

import json
import sys
import time

import sds


def main() -> None:
    path, capacity = sys.argv[1], int(sys.argv[2])
    client = sds.Client.shared(path, capacity=capacity)
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
        elif command == "stats":
            stats = client.stats(args[0], now_ms=int(args[1]))
            reply = json.dumps([stats[k] for k in ("visit", "exception", "timeout", "downgrade", "concurrent")])
        else:
            raise SystemExit(f"unknown command {line!r}")
        print(reply, flush=True)


if __name__ == "__main__":
    main()
