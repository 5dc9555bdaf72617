"""An auth method of a type the models do not know keeps its id, name and description
everywhere it is shown or used (issue 11: codex-acp's ``env_var`` lost its id)."""

from __future__ import annotations

from acp_notebook.cli.doctor import _auth_method
from acp_notebook.client.auth_methods import auth_method_facts
from acp_notebook.client.errors import AuthRequired
from acp_notebook.protocol import models as m
from acp_notebook.ui.auth import AuthPrompt

from ..ui.conftest import Poster, all_html

ENV_VAR = {
    "type": "env_var",
    "id": "openai-api-key",
    "name": "OpenAI API key",
    "description": "Use an API key",
    "vars": [{"name": "OPENAI_API_KEY"}],
}


def test_an_env_var_method_keeps_its_id_name_description_and_variables():
    method = m.parse(m.AuthMethod, ENV_VAR)
    facts = auth_method_facts(method)
    assert (facts.kind, facts.id, facts.name, facts.description) == (
        "env_var",
        "openai-api-key",
        "OpenAI API key",
        "Use an API key",
    )
    assert facts.env_vars == ["OPENAI_API_KEY"] and facts.raw == ENV_VAR


def test_every_place_that_names_auth_methods_names_the_unknown_one_by_its_id():
    methods = [
        m.parse(m.AuthMethod, {"id": "agent-login", "name": "Log in"}),
        m.parse(m.AuthMethod, ENV_VAR),
    ]
    error = AuthRequired("Please log in.", None, methods)
    assert "OpenAI API key (`openai-api-key`)" in str(error)
    assert _auth_method(methods[1]) == "openai-api-key (OpenAI API key; env_var)"
    prompt = AuthPrompt("codex", "Please log in.", methods, post=Poster(), choose=lambda *a: None)
    assert "openai-api-key" in prompt.buttons and "OPENAI_API_KEY" in str(prompt.fields)
    assert "Use an API key" in all_html(prompt.widget)
