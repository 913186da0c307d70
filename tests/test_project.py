"""The project an expectation file belongs to: no file outside it is read."""

import yaml
from expectation_edits import (
    CASE_IDS,
    SAMPLE,
    edited,
    problems,
    write,
)

from ncuverify.names import outside_project
from ncuverify.spec import load


def test_missing_kernel_file_is_reported(tmp_path):
    path = edited(tmp_path, lambda c: c["kernels"]["scale"].update(source=None, file="kernels/none.cu"))
    path = write(tmp_path, path.read_text().replace("    source: null\n", ""))
    assert "kernels.scale.file: no such file: kernels/none.cu" in problems(path)


def test_kernel_files_outside_the_project_are_refused(tmp_path):
    project = tmp_path / "project"
    (project / "expectations").mkdir(parents=True)
    (project / "kernels").mkdir()
    (project / "pyproject.toml").write_text("")
    (project / "kernels" / "k.cu").write_text('extern "C" __global__ void k(float* o) { o[0] = 1.f; }')
    (tmp_path / "secret.cu").write_text("// outside the project")

    def with_file(content, file):
        content["kernels"]["scale"].pop("source")
        content["kernels"]["scale"]["file"] = file

    inside = project / "expectations" / "inside.yaml"
    content = yaml.safe_load(SAMPLE)
    with_file(content, "../kernels/k.cu")
    inside.write_text(yaml.safe_dump(content))
    assert load(inside).content.kernels["scale"].file == "../kernels/k.cu"

    for escape in ("../../secret.cu", "../../../../../../etc/passwd"):
        content = yaml.safe_load(SAMPLE)
        with_file(content, escape)
        outside = project / "expectations" / "outside.yaml"
        outside.write_text(yaml.safe_dump(content))
        said = problems(outside)
        assert f"kernels.scale.file: {escape} lies outside the project ({project}: the nearest" in said
        assert all(marker in said for marker in (".git", "pyproject.toml", ".ncuverify-root"))


def test_a_link_out_of_the_project_is_not_read(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    link = project / "claims.yaml"
    link.symlink_to(secret)
    message = problems(link)
    assert message == f"{link}: links to {secret}, {outside_project(project)}"
    inside = project / "inside.yaml"
    inside.write_text(CASE_IDS)
    (project / "link.yaml").symlink_to(inside)
    assert load(project / "link.yaml").content.claims[0].id == "a_minus_b"


def test_a_folder_linking_out_of_the_project_is_not_read(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.yaml").write_text("token: s3cr3t\n")
    (project / "expectations").symlink_to(elsewhere)
    path = project / "expectations" / "config.yaml"
    assert problems(path) == f"{path}: links to {elsewhere / 'config.yaml'}, {outside_project(project)}"
