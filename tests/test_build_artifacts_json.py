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
