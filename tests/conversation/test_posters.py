"""Which posters go with a reply (``conversation/posters.py``): those of the titles a
question names, in its order, or the poster of what was just added."""

import pytest

from mediabot.conversation.posters import Offered, choose_posters
from tests.support.posters import CHOOSE

X = "https://img.example.com/"
HITS = [Offered("Dune", 2021, X + "2021.jpg"),
        Offered("Dune: Part Two", 2024, X + "two.jpg"),
        Offered("Dune", 1984, X + "1984.jpg"),
        Offered("Jodorowsky's Dune", 2013, None)]


@pytest.mark.parametrize("reply, posters", [
    (CHOOSE, [X + "1984.jpg", X + "2021.jpg", X + "two.jpg"]),
    ("Dune (1984) or Dune: Part Two?", [X + "1984.jpg", X + "two.jpg"]),
    ("Which year did you mean?", [X + "2021.jpg", X + "two.jpg", X + "1984.jpg"]),
    ("Dune (2021) is in the library.", []),
])
def test_choose_posters_follows_the_reply(reply, posters):
    assert choose_posters(HITS, [], reply) == posters


def test_an_add_wins_over_a_question():
    assert choose_posters(HITS, [X + "added.jpg"], "Anything else?") == [X + "added.jpg"]
