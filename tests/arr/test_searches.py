"""The search limit (``arr/searches.py``): at most one new search per title in
``[requests] search_again_hours``, each service's ids their own, on the injected clock."""

import pytest

from mediabot.arr.searches import SearchLimit


@pytest.mark.parametrize("hours, later, allowed", [(6, 5, False), (6, 6, True), (0, 0, True)])
def test_search_limit_per_title(database, clock, hours, later, allowed):
    limit = SearchLimit(hours, clock)
    assert limit.claim("radarr", 1) is None
    assert limit.claim("sonarr", 1) is None, "each service's ids are their own"
    clock.advance(hours=later)
    assert (SearchLimit(hours, clock).claim("radarr", 1) is None) == allowed
