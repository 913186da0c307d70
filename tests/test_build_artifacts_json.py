"""`build --json`: the versioned shape written and read back; a damaged file is refused with its field."""

import json

import pytest

from ncuverify.build.artifacts_json import read_listing, to_json
from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.errors import InputError

KERNEL = ListedKernel(
    "ns::copy",
    "_ZN2ns4copyEPf",
    "ns::copy(float*)",
    "sm_90",
    "lib.so",
    {"static__sass_instructions": 17},
    {"LDG": 1},
)


def test_written_and_read_back(tmp_path):
    path = tmp_path / "build.json"
    document = to_json([KERNEL])
    assert document["format"] == "ncuverify-build" and document["version"] == 1
    assert document["kernels"][0]["sass_mix"] == {"LDG": 1}
    path.write_text(json.dumps(document))
    assert read_listing(path) == [KERNEL]


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ([], "not a `ncuverify build --json` file"),
        ({"format": "ncuverify-build", "version": 9, "kernels": []}, "version 9"),
        (
            {"format": "ncuverify-build", "version": 1, "kernels": [{"name": 1}]},
            r"kernels\[0\]: name, symbol",
        ),
        (
            {
                "format": "ncuverify-build",
                "version": 1,
                "kernels": [{**to_json([KERNEL])["kernels"][0], "facts": {"x": "1"}}],
            },
            "must map names to numbers",
        ),
    ],
)
def test_a_damaged_file_is_refused(tmp_path, document, reason):
    path = tmp_path / "build.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=reason):
        read_listing(path)


def _written(tmp_path, text):
    path = tmp_path / "build.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize("number", ["NaN", "-Infinity", "Infinity", "1" + "0" * 400])
def test_a_fact_that_is_not_a_finite_number_is_refused_naming_the_kernel(tmp_path, number):
    # Python's JSON reader takes NaN and infinities; NaN compares false with everything, so a grown
    # kernel would compare as unchanged.
    text = json.dumps(to_json([KERNEL])).replace(
        '"static__sass_instructions": 17', f'"static__sass_instructions": {number}'
    )
    path = _written(tmp_path, text)
    with pytest.raises(InputError) as raised:
        read_listing(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: kernels[0] (ns::copy, sm_90): facts: static__sass_instructions")
    assert "not a finite number" in message and "\n" not in message


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        (
            '"static__sass_instructions": 17',
            '"static__sass_instructions": 17, "static__sass_instructions": 90',
            "facts:",
        ),
        ('"LDG": 1', '"LDG": 1, "LDG": 7', "sass_mix:"),
        ('"arch": "sm_90"', '"arch": "sm_90", "arch": "sm_80"', "(ns::copy, sm_80):"),
        ('"version": 1', '"version": 1, "version": 1', "build.json: 'version'"),
    ],
)
def test_a_key_given_twice_is_refused(tmp_path, old, new, where):
    text = json.dumps(to_json([KERNEL]))
    assert old in text
    path = _written(tmp_path, text.replace(old, new))
    with pytest.raises(InputError, match="is given twice") as raised:
        read_listing(path)
    assert where in str(raised.value)
