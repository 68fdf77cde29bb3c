"""The hot cursor's rows (phoneintel/db.py): a NamedTuple's fields are filled by position,
so a statement whose columns do not match them by name is refused, never read shifted."""

from typing import NamedTuple

import pytest
from django.db import ProgrammingError

from phoneintel.db import hot_cursor


class _Pair(NamedTuple):
    first: int
    second: str


@pytest.mark.django_db
def test_named_tuple_rows_by_position():
    with hot_cursor(_Pair) as cursor:
        cursor.execute("SELECT 1 AS first, 'b' AS second")
        assert cursor.fetchone() == _Pair(first=1, second="b")


class _Swapped(NamedTuple):
    second: str
    first: int


@pytest.mark.django_db
def test_columns_out_of_the_fields_order_are_refused():
    with pytest.raises(ProgrammingError, match="expects"), hot_cursor(_Swapped) as cursor:
        cursor.execute("SELECT 1 AS first, 'b' AS second")
        cursor.fetchone()
