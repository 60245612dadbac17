"""How many examples the codec property tests draw per message version.

The suite runs a few per version (every run draws new ones: 1,871 cases, about a minute in all); a deep run
scales them up, e.g. ``KRAFTWIRE_CODEC_EXAMPLES=20 python -m pytest tests/wings/codec`` draws twenty times
as many."""
import os

SCALE = float(os.environ.get("KRAFTWIRE_CODEC_EXAMPLES", "1"))


def examples(per_version: int) -> int:
    return max(1, round(per_version * SCALE))
