"""The prompt-cache bench's own parts (bench/prompt_cache.py and what it imports), without a
real llama-server: the household's script, the cold prompt's parts counted against a small
fake of llama-server's /apply-template, /tokenize and chat endpoint, the figures the bench
prints, the baseline's export, and the driver holding a household's texts through the real
engine behind the recording proxy.
"""

import itertools
import json
import statistics
import subprocess
import threading
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import pytest

from bench.cache_proxy import SCRIPTED_REPLY, Proxy
from bench.cache_summary import compare, figures, summarise, tool_results
from bench.cold_offline import CountingUpstream
from bench.cold_prompt import breakdown, cold_figures, read_cold, wire_bytes
from bench.harness import ROOT
from bench.household_script import ADMIN, HOUSEHOLD, MEMBERS, TEXTS, as_offered, call
from bench.prompt_cache import drive, export_revision, parse_args, server_argv, variant_plan
from mediabot.arr.tools import available_tools, tool_schemas
from tests.fakes.openai import FakeOpenAI
from tests.support.messages import LLAMA_PROPS
from tests.support.prompts import person_part

TOOLS = [{"type": "function", "function": {"name": "search_media", "description": "Find it",
                                           "parameters": {"type": "object"}}},
         {"type": "function", "function": {"name": "download_queue", "description": "Queue",
                                           "parameters": {"type": "object"}}}]
REQUEST = {"model": "m", "max_tokens": 48, "tools": TOOLS, "messages": [
    {"role": "system", "content": "You are the house bot. Be brief."},
    {"role": "user", "content": "do we have dune?"},
    {"role": "assistant", "content": "Yes, Dune (2021)."},
    {"role": "user", "content": "what is downloading"}]}


# ------------------------------------------------------------------ the household's script

def test_household_has_an_admin_and_members_who_take_turns():
    roles = {role for _, _, role, _ in MEMBERS}
    senders = [member for member, *_ in HOUSEHOLD]
    assert len(MEMBERS) == 3 and roles == {"admin", "member"}
    assert [entry[1:] for entry in HOUSEHOLD] == list(TEXTS)
    assert set(senders) == {0, 1, 2}
    switches = sum(a != b for a, b in itertools.pairwise(senders))
    assert switches >= len(senders) - 3      # nearly every text comes from someone else


def test_only_the_admin_removes_and_the_y_comes_from_who_asked():
    for index, (member, _, _text, forced) in enumerate(HOUSEHOLD):
        if forced is not None and forced["name"] == "remove_media":
            assert member == ADMIN and MEMBERS[member][2] == "admin"
            assert HOUSEHOLD[index + 1][2] == "Y" and HOUSEHOLD[index + 1][0] == member


def test_a_scripted_call_takes_the_shape_of_the_tools_the_request_offers():
    """The script is written in the oldest form, so every tree runs it; where the tree's
    tools name a title by one id, the call is what a model reading them writes."""
    today = tool_schemas(available_tools("admin", sonarr=True, radarr=True))
    add = call("add_series", tvdb_id=78107)
    assert as_offered(add, today) == {"name": "add_media", "arguments": '{"id": "tv78107"}'}
    assert json.loads(as_offered(call("remove_media", kind="movie", id=329865),
                                 today)["arguments"]) == {"id": "m329865"}
    search = call("library_status", query="arrival", kind="movie")
    assert as_offered(search, today) == search
    two_ids = [{"type": "function", "function": {"name": "add_media", "parameters": {
        "type": "object", "properties": {"tmdb_id": {"type": "integer"},
                                         "tvdb_id": {"type": "integer"}}}}}]
    oldest = [{"type": "function", "function": {"name": "add_series", "parameters": {
        "type": "object", "properties": {"tvdb_id": {"type": "integer"}}}}}]
    assert as_offered(add, two_ids) == add and as_offered(add, oldest) == add


@pytest.mark.e2e
def test_through_the_proxy_a_scripted_add_is_sent_as_todays_tools_take_it(tmp_path):
    fake = FakeOpenAI(default_text="Sure.").start()
    fake.serves_any_model = True
    plan = variant_plan("solo-20", None)
    [add] = [entry for entry in plan["texts"] if entry[2] == "add the uk one please"]
    try:
        with Proxy(urlparse(fake.url).port) as proxy:
            drive_household(proxy, plan, [add], tmp_path)
    finally:
        fake.stop()
    after = proxy.recorder.requests[-1]["messages"]
    [made] = [c["function"] for m in after for c in m.get("tool_calls") or ()]
    assert (made["name"], json.loads(made["arguments"])) == ("add_media", {"id": "tv78107"})
    assert json.loads(after[-1]["content"])["id"] == "tv78107"


def test_variants_set_members_window_and_host_memory_cache():
    solo, house, bare = (variant_plan(name, 512) for name in
                         ("solo-8", "household", "household-no-ram"))
    assert (len(solo["members"]), solo["max_messages"], solo["cache_ram"]) == (1, 8, 512)
    assert (len(house["members"]), house["max_messages"], house["cache_ram"]) == (3, 20, 512)
    assert bare["cache_ram"] == 0 and bare["texts"] == house["texts"]
    with pytest.raises(SystemExit):
        parse_args(["--variant", "family"])


def test_the_slots_variants_give_each_member_a_slot_of_one_shared_buffer(tmp_path):
    slots, bare = variant_plan("household-slots", 512), variant_plan("household-slots-no-ram", 512)
    assert (slots["parallel"], slots["cache_ram"], bare["parallel"], bare["cache_ram"]) == (
        3, 512, 3, 0)
    assert variant_plan("household", None, parallel=2)["parallel"] == 2
    argv = server_argv(tmp_path / "llama-server", tmp_path / "m.gguf", 8080, True, False,
                       0, (), slots["parallel"])
    assert argv[argv.index("--parallel") + 1] == "3" and "--kv-unified" in argv
    one = server_argv(tmp_path / "llama-server", tmp_path / "m.gguf", 8080, True, False)
    assert one[one.index("--parallel") + 1] == "1" and "--kv-unified" not in one


# ----------------------------------------------------------- the cold prompt and its parts

class FakeLlamaServer:
    """llama-server's endpoints the cold figures use: a template that writes each part on
    its own lines, a tokenizer that counts words (plus one BOS when asked), and a chat
    endpoint that reads the rendered prompt and says how many tokens it reused."""

    def __init__(self):
        self.bodies: list[dict] = []
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @staticmethod
    def render(messages: list[dict], tools: list | None) -> str:
        head = f"<s> system\n{messages[0]['content']}"
        if tools:
            head += ("\nSchemas within <tools></tools> tags:\n<tools>\n"
                     + "\n".join(json.dumps(t) for t in tools) + "\n</tools>")
        rest = "".join(f" </s>\n<s> {m['role']}\n{m['content']}" for m in messages[1:])
        return head + rest + " </s>\n<s> assistant\n"

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.bodies.append(body)
                if self.path == "/apply-template":
                    answer = {"prompt": fake.render(body["messages"], body.get("tools"))}
                elif self.path == "/tokenize":
                    count = len(body["content"].split()) + bool(body.get("add_special"))
                    answer = {"tokens": list(range(count))}
                else:
                    prompt = fake.render(body["messages"], body.get("tools"))
                    n = len(prompt.split()) + 1
                    cached = 0 if body.get("cache_prompt") is False else n - 5
                    answer = {"timings": {"prompt_n": n - cached, "cache_n": cached,
                                          "prompt_ms": 2.0 * (n - cached)}}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        return Handler

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llama():
    fake = FakeLlamaServer()
    yield fake
    fake.close()


def words(text: str) -> int:
    return len(text.split())


def test_the_parts_of_a_cold_prompt_add_up_to_what_the_server_reads(llama):
    parts = breakdown(llama.url, REQUEST)
    cold = read_cold(llama.url, REQUEST)
    schema_lines = "\n".join(json.dumps(t) for t in TOOLS)
    assert parts["system"] == words(REQUEST["messages"][0]["content"])
    assert parts["tool_json"] == words(schema_lines)
    assert parts["tools_block"] == words(schema_lines) + 6     # the tags, named and written
    assert parts["history"] == sum(words(m["content"]) + 3 for m in REQUEST["messages"][1:])
    assert parts["total"] == cold["prompt_n"] == sum(
        parts[key] for key in ("system", "tools_block", "history", "template"))
    assert cold["cache_n"] == 0 and llama.bodies[-1]["max_tokens"] == 1


def test_offline_each_answer_reports_the_prompt_as_the_server_counts_it_and_nothing_else(
        llama):
    """``bench/cold_offline.py``: the upstream answers without generating, with the
    rendered prompt's tokens as usage, so the engine calibrates as against the server; other
    requests reach the server as they came."""
    upstream = CountingUpstream(llama.url)
    try:
        connection = HTTPConnection("127.0.0.1", upstream.port, timeout=10)
        connection.request("POST", "/v1/chat/completions", json.dumps(REQUEST))
        answer = json.loads(connection.getresponse().read())
        connection.request("POST", "/tokenize", json.dumps({"content": "one two three"}))
        counted = json.loads(connection.getresponse().read())
        connection.close()
    finally:
        upstream.close()
    assert answer["usage"]["prompt_tokens"] == breakdown(llama.url, REQUEST)["total"]
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": "ok"}
    assert counted == {"tokens": [0, 1, 2]}
    assert not any("max_tokens" in body for body in llama.bodies), "nothing was generated"


def test_cold_figures_count_every_first_request_read_a_sample_and_size_tool_lists(llama):
    member = {**REQUEST, "tools": TOOLS[:1]}
    requests = [REQUEST, {**REQUEST, "messages": REQUEST["messages"][:2]}, member]
    rows = [{"stage": "first", "text": 0, "member": 0}, {"stage": "after_tool", "text": 0},
            {"stage": "first", "text": 1, "member": 1}]
    cold = cold_figures(llama.url, requests, rows)
    assert [entry["request"] for entry in cold["requests"]] == [0, 2]
    assert cold["cold_reads"] == 2 and cold["cold_cache_n_max"] == 0
    assert cold["cold_read_matches_rendered"] is True
    assert cold["cold_prompt_tokens_median"] == statistics.median(
        entry["total"] for entry in cold["requests"])
    sizes = {tuple(s["tools"]): s for s in cold["schemas"]}
    assert sizes[("search_media", "download_queue")]["wire_bytes"] == wire_bytes(TOOLS)
    assert sizes[("search_media", "download_queue")]["requests"] == 2
    assert sizes[("search_media",)]["json_tokens"] == words(json.dumps(TOOLS[0]))
    sampled = cold_figures(llama.url, requests, rows, sample=1)
    assert sampled["cold_reads"] == 1 and len(sampled["requests"]) == 2   # all tokenized


# ---------------------------------------------------------------------------- the figures

def row(request, text, stage, cache_n, prompt_n, member=0):
    return {"request": request, "text": text, "stage": stage, "member": member,
            "cache_n": cache_n, "prompt_n": prompt_n, "prompt_tokens": cache_n + prompt_n,
            "prompt_ms": 1.0}


def test_a_household_run_reports_reuse_where_another_member_texted_before():
    rows = [row(0, 0, "first", 0, 1000, member=0), row(1, 1, "first", 100, 900, member=1),
            row(2, 1, "after_tool", 950, 50, member=1), row(3, 2, "first", 990, 10, member=1)]
    texts = [{"text": i, "turn_seconds": 1.0} for i in range(3)]
    breaks = [{"request": i, "shared_prefix_tokens": shared}
              for i, shared in ((1, 100), (2, 950), (3, 990))]
    summary = summarise(rows, texts, breaks, "household")
    assert summary["first_after_other_member_median"] == 0.1
    assert summary["first_after_same_member_median"] == 0.99
    assert summary["shared_prefix_tokens_across_members_median"] == 100
    assert summary["targets_met"] == {"first_median >= 0.9": False,
                                      "tokens_read_per_text_mean <= 350": False,
                                      "requests_per_text <= 1.35": True}
    assert summary["requests_per_text"] == round(4 / 3, 3)
    assert summary["tokens_read_per_text_mean"] == round(1960 / 3, 2)


def test_prompts_read_ahead_are_counted_beside_what_the_person_waits_for():
    """A text answered in a tool's own words, its next prompt read ahead, then a text that
    reads only its own words: the person waited for two requests, the server read three."""
    rows = [{**row(0, 0, "first", 0, 1000), "prompt_ms": 2000.0},
            {**row(1, 0, "read_ahead", 950, 60), "prompt_ms": 300.0},
            {**row(2, 1, "first", 1050, 10), "prompt_ms": 100.0}]
    texts = [{"text": i, "turn_seconds": 1.0} for i in range(2)]
    summary = summarise(rows, texts, [], "solo-20")
    assert summary["requests_per_text"] == 1.0 and summary["read_ahead_per_text"] == 0.5
    assert summary["tokens_read_per_text_mean"] == 505.0
    assert summary["tokens_read_per_text_all_mean"] == 535.0
    assert summary["server_seconds_per_text_mean"] == 1.05
    assert summary["server_seconds_per_text_all_mean"] == 1.2
    assert summary["first_median"] == round((0 + 1050 / 1060) / 2, 3), "first requests only"
    assert summary["read_ahead_median"] == round(950 / 1010, 3)


def test_figures_take_medians_over_rounds_and_compare_against_the_baseline():
    def run(label, cold_tokens):
        return {"label": label, "variant": "solo-20", "driver_cpu_seconds": 1.0,
                "server_cpu_seconds": 9.0,
                "summary": {"cold_prompt_tokens_median": cold_tokens, "first_median": 0.9,
                            "targets_met": {}}}
    table = figures([run("baseline", 2000), run("current", 1000), run("baseline", 2200),
                     run("current", 1100)])
    assert table["baseline"]["solo-20"]["cold_prompt_tokens_median"] == 2100
    row_ = compare(table, ["baseline", "current"])["solo-20"]["cold_prompt_tokens_median"]
    assert row_ == {"baseline": 2100, "current": 1050, "ratio current/baseline": 0.5}


def test_tool_results_are_sized_once_each_per_tool():
    search = {"role": "tool", "name": "search_media", "content": '{"results":[]}'}
    queue = {"role": "tool", "name": "download_queue", "content": '{"total":0,"é":1}'}
    requests = [{"messages": [search]}, {"messages": [search, queue]}]
    sizes = tool_results(requests)
    assert sizes["search_media"] == {"results": 1, "bytes_median": 14, "bytes_max": 14}
    assert sizes["download_queue"]["bytes_max"] == len(queue["content"].encode()) == 18


# ------------------------------------------------------------------ baseline and driver

def test_a_baseline_revision_is_exported_as_a_plain_tree(tmp_path):
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    commit = export_revision("HEAD", tmp_path / "tree")
    assert (tmp_path / "tree" / "mediabot" / "__init__.py").exists()
    assert not (tmp_path / "tree" / ".git").exists()
    assert commit == subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                    capture_output=True, text=True).stdout.strip()


def drive_household(proxy, plan, texts, tmp_path):
    """The bench's driver sending ``texts`` as the plan's members through ``proxy``."""
    return drive(ROOT, {
        "proxy": proxy.url, "texts": texts, "timeout": 10,
        "members": [dict(zip(("phone", "name", "role", "language"), m, strict=True))
                    for m in plan["members"]],
        "reply_tokens": 48, "max_messages": 20, "workdir": str(tmp_path),
        "database": str(tmp_path / "bench.db")}, timeout=120)


@pytest.mark.e2e
def test_the_driver_sends_each_members_texts_as_that_member(tmp_path):
    fake = FakeOpenAI(default_text="Sure.").start()
    fake.serves_any_model = True
    plan = variant_plan("household", None)
    try:
        with Proxy(urlparse(fake.url).port) as proxy:
            texts, cpu = drive_household(proxy, plan, plan["texts"][1:4], tmp_path)
    finally:
        fake.stop()
    rows, requests = proxy.recorder.rows, proxy.recorder.requests
    assert [t["member"] for t in texts] == [1, 2, 0] and cpu > 0
    assert [r["member"] for r in rows if r["stage"] == "first"] == [1, 2, 0]
    firsts = [r for r in requests if r["messages"][-1]["role"] == "user"]
    people = [person_part(r) for r in firsts]
    assert "Alex" in people[0] and "Spanish" in people[1] and "Sam" in people[2]
    assert len({r["messages"][0]["content"] for r in firsts}) == 1, \
        "one system text for the household (issue 31)"
    tools = [{t["function"]["name"] for t in r["tools"]} for r in requests]
    assert all(names == tools[0] for names in tools) and "remove_media" in tools[0]


@pytest.mark.e2e
def test_through_the_proxy_each_member_names_a_slot_of_their_own(tmp_path):
    """The proxy passes mediabot's look at llama-server's /props on, so a server with slots
    gets each member's requests on one slot each, as the -slots variants measure."""
    fake = FakeOpenAI(default_text="Sure.").start()
    fake.serves_any_model = True
    fake.serve_root("/props", {**LLAMA_PROPS, "total_slots": 3})
    plan = variant_plan("household-slots", None)
    try:
        with Proxy(urlparse(fake.url).port) as proxy:
            drive_household(proxy, plan, plan["texts"][:4], tmp_path)
    finally:
        fake.stop()
    slots = {(row["member"], row["id_slot"]) for row in proxy.recorder.rows}
    assert slots == {(0, 0), (1, 1), (2, 2)}
    assert fake.root_asked.count("/props") == 1


@pytest.mark.e2e
def test_scripted_replies_ask_the_server_for_one_token_and_answer_from_the_script(tmp_path):
    fake = FakeOpenAI(default_text="a long ramble from the tiny model").start()
    fake.serves_any_model = True
    plan = variant_plan("solo-20", None)
    try:
        with Proxy(urlparse(fake.url).port, scripted=True) as proxy:
            texts, _ = drive_household(proxy, {"members": [MEMBERS[0]]}, plan["texts"][:2],
                                       tmp_path)
    finally:
        fake.stop()
    assert [t["reply"] for t in texts] == [SCRIPTED_REPLY.format(text=t["sent"])
                                           for t in texts]
    assert {r["max_tokens"] for r in fake.requests} == {1}
    assert [r["stage"] for r in proxy.recorder.rows] == ["first", "first", "after_tool"]


@pytest.mark.e2e
def test_the_driver_times_the_reply_and_the_proxy_tells_the_read_ahead_apart(tmp_path):
    """On a llama-server, "what's downloading right now?" is answered in the tool's words and
    its next prompt read ahead after the reply: a request of its own, for one token, never
    the scripted call; the next text's first request begins with what it read."""
    fake = FakeOpenAI(default_text="a long ramble from the tiny model").start()
    fake.serves_any_model = True
    fake.serve_root("/props", {**LLAMA_PROPS, "total_slots": 1})
    plan = variant_plan("solo-20", None)
    try:
        with Proxy(urlparse(fake.url).port, scripted=True) as proxy:
            drive_household(proxy, {"members": [MEMBERS[0]]}, plan["texts"][3:5], tmp_path)
    finally:
        fake.stop()
    rows, requests = proxy.recorder.rows, proxy.recorder.requests
    assert [(r["text"], r["stage"]) for r in rows] == [(0, "first"), (0, "read_ahead"),
                                                       (1, "first")]
    assert [r["forced_call"] for r in rows] == ["download_queue", None, None]
    assert fake.requests[1]["max_tokens"] == 1
    assert requests[2]["messages"][:-1] == requests[1]["messages"][:-1]


@pytest.mark.e2e
def test_written_replies_are_the_models_own_within_the_bound_and_its_own_calls_are_replaced(
        tmp_path):
    """Texts 0 (no call), 1 (a scripted search, then the reply after its result): the
    script's call is asked for one token, each reply for at most the bound, and a call the
    model makes by itself becomes the scripted reply, so the rounds stay the script's."""
    fake = FakeOpenAI(default_text="Dune (2021) is in the library.").start()
    fake.serves_any_model = True
    fake.enqueue_tool_calls([("download_queue", {})])
    plan = variant_plan("solo-20", None)
    try:
        with Proxy(urlparse(fake.url).port, written=40) as proxy:
            texts, _ = drive_household(proxy, {"members": [MEMBERS[0]]}, plan["texts"][:2],
                                       tmp_path)
    finally:
        fake.stop()
    assert [t["reply"] for t in texts] == [SCRIPTED_REPLY.format(text=texts[0]["sent"]),
                                           "Dune (2021) is in the library."]
    assert [r["max_tokens"] for r in fake.requests] == [40, 1, 40]
    assert [r["own_call"] for r in proxy.recorder.rows] == [True, False, False]


def test_household_variants_name_the_slots_and_whether_idle_slots_keep_their_prompt(tmp_path):
    four = variant_plan("household-p4-no-idle", None)
    assert (four["parallel"], four["idle"], four["cache_ram"]) == (4, False, None)
    assert variant_plan("household-no-ram", None)["idle"] is True
    argv = server_argv(tmp_path / "llama-server", tmp_path / "m.gguf", 8080, False, False,
                       None, (), four["parallel"], four["idle"])
    assert "--no-cache-idle-slots" in argv and "--swa-full" not in argv
    assert argv[argv.index("--parallel") + 1] == "4" and "--kv-unified" in argv
    assert "--no-cache-idle-slots" not in server_argv(
        tmp_path / "llama-server", tmp_path / "m.gguf", 8080, True, False)
    assert parse_args(["--model", "smollm2"]).model == "smollm2"
    with pytest.raises(SystemExit):
        parse_args(["--scripted-replies", "--written-replies", "40"])
