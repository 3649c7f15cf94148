# Python workload for bench/run: a mix of what real Python programs spend
# time on (bytecode dispatch, dicts, strings, regular expressions, json,
# big integers, sorting), with deterministic output checked across runners.
# Uses only modules shipped in python3.13-minimal.
import json
import re
import sys

SCALE = int(sys.argv[1]) if len(sys.argv) > 1 else 1


def lcg(seed):
    while True:
        seed = (seed * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        yield seed >> 33


def interp_loop(n):
    # Tight bytecode loop: branches, integer ops, local variables.
    acc = 0
    for i in range(n):
        if i % 3 == 0:
            acc += i * 7
        elif i % 5 == 0:
            acc ^= i << 3
        else:
            acc -= i
    return acc


def words_and_dicts(n):
    rnd = lcg(42)
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu"]
    counts = {}
    for _ in range(n):
        r = next(rnd)
        w = "".join(syll[(r >> s) % 10] for s in range(0, 3 * (2 + r % 3), 3))
        counts[w] = counts.get(w, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return len(counts), top


def regex_pass(n):
    text = " ".join(f"user{i}@host{i % 17}.example id={i * 31 % 1000} v{i % 7}.{i % 11}"
                    for i in range(n))
    mails = re.findall(r"\b(\w+)@(\w+)\.example\b", text)
    ids = sum(int(m) for m in re.findall(r"id=(\d+)", text))
    vers = len(re.findall(r"v[0-6]\.(?:1[0]|[0-9])\b", text))
    return len(mails), ids, vers


def json_round_trip(n):
    rnd = lcg(7)
    docs = [{"id": i, "name": f"item{i}", "tags": [f"t{next(rnd) % 50}" for _ in range(4)],
             "price": (next(rnd) % 100000) / 100, "ok": i % 2 == 0} for i in range(n)]
    s = json.dumps(docs, sort_keys=True)
    back = json.loads(s)
    return len(s), sum(d["price"] for d in back if d["ok"])


def bigint(n, reps):
    # Factorials and Fibonacci numbers with big integers (kept under the
    # 4300-digit str() limit); report digit sums.
    total = 0
    for r in range(reps):
        f = 1
        for i in range(2, n + r):
            f *= i
        a, b = 0, 1
        for _ in range(n * 4):
            a, b = b, a + b
        total += sum(map(int, str(f))) + len(str(a))
    return total


def sorting(n):
    rnd = lcg(1)
    xs = [next(rnd) % 1000003 for _ in range(n)]
    xs.sort()
    pairs = sorted((x % 97, -x) for x in xs[::3])
    return xs[n // 2], pairs[len(pairs) // 3]


for _ in range(SCALE):
    print("interp", interp_loop(2_000_000))
    print("words", words_and_dicts(200_000))
    print("regex", regex_pass(60_000))
    print("json", json_round_trip(40_000))
    print("bigint", bigint(1200, 40))
    print("sort", sorting(300_000))
