"""Kernel ids made from C++ names, and YAML scalars that read back as the text written."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ncuverify.init.names import MAX_KERNEL_ID, kernel_ids, scalar
from ncuverify.spec import read_yaml
from ncuverify.spec.fields import _id


def test_a_name_becomes_letters_digits_and_underscores():
    ids = kernel_ids(["stride<float>", "ns::copy", "f<float, 2>", "scale", "1bad", "<>"])
    assert ids == {
        "stride<float>": "stride_float",
        "ns::copy": "ns_copy",
        "f<float, 2>": "f_float_2",
        "scale": "scale",
        "1bad": "kernel_1bad",
        "<>": "kernel",
    }


def test_names_that_collide_get_numbers_in_order():
    ids = kernel_ids(["a::b", "a_b", "a<b>", "a_b_2"])
    assert ids == {"a::b": "a_b", "a_b": "a_b_2", "a<b>": "a_b_3", "a_b_2": "a_b_2_2"}


def test_a_long_name_is_cut_and_stays_unique():
    long = "k" * 4000
    ids = kernel_ids([long, long + "x", long + "y"])
    assert len(set(ids.values())) == 3
    assert all(len(key) <= MAX_KERNEL_ID for key in ids.values())
    assert ids[long] == "k" * MAX_KERNEL_ID and ids[long + "y"].endswith("_3")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=8, unique=True))
def test_every_id_is_a_valid_id_and_they_are_unique(names):
    ids = kernel_ids(names)
    assert len(set(ids.values())) == len(names)
    for key in ids.values():
        assert _id(key) == key and len(key) <= MAX_KERNEL_ID


def test_words_yaml_would_misread_are_quoted():
    assert scalar("scale") == "scale"
    for word in ("yes", "No", "on", "true", "null", "NULL", "1e3", ".inf", "0x10", "~", ""):
        assert scalar(word).startswith('"'), word
        assert read_yaml(f"k: {scalar(word)}")[0] == {"k": word}


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40))
def test_any_text_reads_back_as_written(text):
    assume(text != "k")
    assert read_yaml(f"k: {scalar(text)}\n{scalar(text)}: 1\n")[0] == {"k": text, text: 1}
