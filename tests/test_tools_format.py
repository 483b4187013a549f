"""The pure formatting helpers behind every tool result."""

import pytest

from mediabot.tools.format import (episode_range, human_size, human_timeleft, label,
                                   short_text)


@pytest.mark.parametrize("size, text", [(0, "0 B"), (950, "950 B"), (4_200_000_000, "4.2 GB"),
                                        (61_908_000_000, "62 GB"), (850_000_000, "850 MB"),
                                        (2_000_000_000_000, "2 TB")])
def test_human_size(size, text):
    assert human_size(size) == text


@pytest.mark.parametrize("left, text", [("00:12:30", "13 min"), ("02:05:00", "2 h 5 min"),
                                        ("1.02:03:04", "1 d 2 h"), ("00:00:10", "1 min"),
                                        (None, None), ("soon", None)])
def test_human_timeleft(left, text):
    assert human_timeleft(left) == text


def test_labels_and_episode_ranges():
    assert label("The Office", 2005) == "The Office (2005)"
    assert label("The Office (UK)", 2001) == "The Office (UK, 2001)"
    assert label("Blade Runner 2049", 2017) == "Blade Runner 2049 (2017)"
    assert label("Dune", None) == "Dune"
    assert episode_range([(2, 7), (2, 10), (2, 8)]) == "S02E07-E10"
    assert episode_range([(1, 9), (2, 1)]) == "2 episodes"


def test_short_text_cuts_at_a_word():
    text = short_text("word " * 60, 40)
    assert len(text) <= 40 and text.endswith("word...")
