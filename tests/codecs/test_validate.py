"""Type checks of JSON values: strict ones for requests (the error names the param in the
client's terms), tolerant ones for streams and responses (never raise)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from streamscope.codecs import validate as v
from streamscope.model.request import RequestError

STRICT: list[tuple[Callable[[Any, str], Any], Any, Any, str]] = [
    # check, a good value, a wrong one, what the error says it must be
    (v.expect_str, "hi", 5, "a string"),
    (v.expect_number, 0.5, "0.5", "a number"),
    (v.expect_number, 2, True, "a number"),  # a bool is no number
    (v.expect_int, 3, 3.5, "an integer"),
    (v.expect_int, 0, False, "an integer"),
    (v.expect_bool, False, 0, "a boolean"),
    (v.expect_object, {}, [], "an object"),
    (v.expect_list, [], {}, "an array"),
    (v.expect_str_or_list, "text", {"type": "text"}, "a string or an array"),
]


@pytest.mark.parametrize(("check", "good", "wrong", "what"), STRICT)
def test_a_strict_check_gives_the_value_or_names_the_param(
    check: Callable[[Any, str], Any], good: Any, wrong: Any, what: str
) -> None:
    assert check(good, "p") == good
    with pytest.raises(RequestError) as info:
        check(wrong, "messages[2].content")
    assert info.value.param == "messages[2].content"
    assert info.value.message == f"messages[2].content must be {what}"
    with pytest.raises(RequestError, match=r"^model is required$"):
        check(None, "model")


def test_numbers_come_back_as_floats() -> None:
    value = v.expect_number(2, "temperature")
    assert value == 2.0 and isinstance(value, float)


@pytest.mark.parametrize(
    ("check", "good"),
    [
        (v.opt_str, "a"),
        (v.opt_number, 1.5),
        (v.opt_int, 7),
        (v.opt_bool, True),
        (v.opt_object, {"a": 1}),
        (v.opt_str_list, ["a", "b"]),
    ],
)
def test_an_optional_check_lets_none_through(check: Callable[[Any, str], Any], good: Any) -> None:
    assert check(None, "p") is None
    assert check(good, "p") == good
    with pytest.raises(RequestError):
        check(object(), "p")


def test_a_list_of_strings_holds_only_strings() -> None:
    with pytest.raises(RequestError, match=r"^stop must be an array of strings$") as info:
        v.opt_str_list(["a", 1], "stop")
    assert info.value.param == "stop"


def test_the_body_must_be_an_object_and_names_no_param() -> None:
    assert v.request_body({"model": "m"}) == {"model": "m"}
    with pytest.raises(RequestError) as info:
        v.request_body([{"model": "m"}])
    assert info.value.param is None and "JSON object" in info.value.message


def test_tolerant_reads_give_neutral_values() -> None:
    assert [v.as_int(x) for x in (3, -1, True, 3.0, "3", None)] == [3, -1, None, None, None, None]
    assert [v.as_str(x) for x in ("x", "", 3, None, ["x"])] == ["x", "", "", "", ""]
    assert [v.is_number(x) for x in (3, -0.5, True, "3", None)] == [True, True, False, False, False]
