"""Sample Python: comparisons, generics, regexes, bit shifts."""
from typing import Generic, TypeVar

S = TypeVar("S")


class Box(Generic[S]):
    def __init__(self, value: S) -> None:
        self.value = value


def clamp(x: int, lo: int, hi: int) -> int:
    return lo if x < lo else hi if x > hi else x


PATTERN = r"<(\w+)[^>]*>(.*?)</\1>"
print(1 << 4, 256 >> 2, "a<b", f"{clamp(5, 0, 3)!r:<10}")
TOKEN = "3c2f7370616e3e"  # hex of '</span>'
SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
