"""pbtext.py - reads protoc's text format (`protoc --decode=...` output).

parse(text) returns a dict: field name -> list of values (str for scalars,
as written, quotes removed and C escapes undone; dict for messages), so
repeated and single fields read the same way: msg["packet"][0]["timestamp"][0].
"""
import codecs
import sys


def _scalar(v):
    if v.startswith('"') and v.endswith('"'):
        return codecs.escape_decode(v[1:-1].encode())[0].decode("utf-8", "replace")
    return v


def parse(text):
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, _, val = line.partition(": ")
            stack[-1].setdefault(key, []).append(_scalar(val))
    if len(stack) != 1:
        raise ValueError("unbalanced braces in protoc output")
    return root


def one(msg, key, default=None):
    """The single value of key in msg, or default."""
    v = msg.get(key)
    return v[0] if v else default


if __name__ == "__main__":
    print(parse(sys.stdin.read()))
