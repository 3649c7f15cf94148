# tests/containers.sh: the python3 script run inside a riscv64 container:
# the interpreter's start-up, imports, and a little work of each kind
# (bignums, dicts and sorting, regular expressions, json, hashing,
# decimal, classes). The output is deterministic.
import decimal, hashlib, json, platform, re, sys
from collections import Counter

print(platform.machine(), sys.version_info[:2], sys.argv[1:])
x, words = 12345, []
for i in range(60000):
    x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
    words.append("".join(chr(97 + (x >> s) % 26) for s in range(5, 5 + 6 * (3 + i % 4), 6)))
c = Counter(w[:2] for w in words)
print(len(words), c.most_common(3), sorted(words)[:3])
print(len(re.findall(r"\b[aeiou][a-z]*[aeiou]\b", " ".join(words))))
doc = json.dumps({w: [len(w), w.upper()] for w in words[:5000]}, sort_keys=True)
print(len(doc), hashlib.sha256(doc.encode()).hexdigest())
decimal.getcontext().prec = 60
print(decimal.Decimal(2).sqrt(), 3**1000 % 1000003, sum(range(10**6)))

class Vec:
    __slots__ = ("x", "y")
    def __init__(self, x, y): self.x, self.y = x, y
    def __add__(self, o): return Vec(self.x + o.x, self.y + o.y)
v = Vec(0, 0)
for i in range(100000):
    v = v + Vec(i % 7, -(i % 3))
print(v.x, v.y)
