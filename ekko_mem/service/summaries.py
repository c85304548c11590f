"""The chain of summaries and extraction: after a reply, turn new messages into memory.

Both read only what is new: a summary reads the latest summary and the messages after its
toMessageId; extraction reads the messages after its own watermark. A failed LLM run never
blocks and never half-writes: it becomes a job in the retry queue.
"""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step
from ..ids import new_id
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .drafts import Drafts
    from .queries import Queries
    from .remembering import Remembering

DEFAULT_LLM_TIMEOUT = 60


class Summaries(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, queries: Queries,
                 remembering: Remembering) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.queries = queries
        self.remembering = remembering

    # -- extraction ---------------------------------------------------------------------------
    def extract(self, *, session: str | None = None, llm_cmd: str | None = None) -> dict:
        """Run the extractor over messages not yet extracted; apply each operation."""
        sid = self.session(session)
        store = self.store
        messages = store.messages.list_messages_after(sid, store.summaries.extraction_mark(sid))
        if not messages:
            return {"sessionId": sid, "messageIds": [], "results": [], "queued": None,
                    "reason": "no new messages since the last extraction"}
        fresh = self._not_yet_remembered(messages)
        if not fresh:
            self._advance_mark(sid, messages)
            return {"sessionId": sid, "messageIds": [m["id"] for m in messages],
                    "results": [], "queued": None, "ignored": [],
                    "reason": "every new message is already the source of a memory"}
        command = self._llm_command(llm_cmd)
        if command:
            outcome = self._llm_extraction(sid, fresh, command)
            if outcome.get("queued"):
                self._advance_mark(sid, messages)
                return outcome
            extraction = outcome["extraction"]
        else:
            extraction = self._rule_extraction(fresh)
        results = self.apply_extraction(extraction, session=sid)
        self._advance_mark(sid, messages)
        return {"sessionId": sid, "messageIds": [m["id"] for m in messages],
                "results": results, "queued": None,
                "ignored": extraction.get("ignored", [])}

    def _not_yet_remembered(self, messages: list[dict]) -> list[dict]:
        """The messages no memory cites yet. What `remember` stored from a message is that
        message's memory; extracting it again would make a second, weaker copy of it."""
        ids = [m["id"] for m in messages]
        cited: set[str] = set()
        for _, store in self.stores.existing():
            forms = ids if store is self.store else [*ids, *self._qualified(ids)]
            for node in store.erasure.nodes_citing(forms):
                # A user memory names a workspace message with the workspace id before it.
                cited.update(ref.rpartition(":")[2] for ref in node["sourceMessageIds"])
        return [m for m in messages if m["id"] not in cited]

    def _qualified(self, ids: list[str]) -> list[str]:
        workspace = self.store.store_id()
        return [f"{workspace}:{mid}" for mid in ids]

    def apply_extraction(self, extraction: dict, *, session: str) -> list[dict]:
        return self.remembering.apply_items(extraction.get("nodes", []), actor="extractor",
                                session=session)

    def _rule_extraction(self, messages: list[dict]) -> dict:
        from ..extract.rules import extract
        return extract(messages, now=self.env.now_iso(), end_of_day=self.drafts.end_of_day())

    def _advance_mark(self, sid: str, messages: list[dict]) -> None:
        store = self.store
        with store.db.atomic():
            store.summaries.set_extraction_mark(sid, messages[-1]["id"], self.env.now_iso())

    def _llm_command(self, given: str | None) -> str | None:
        return given or self.config.get("extractor.command")

    def _llm_extraction(self, sid, messages, command) -> dict:
        from ..extract.prompts import extraction_prompt
        from ..models import MemoryExtraction
        prompt = extraction_prompt(self.store.summaries.get_latest_summary(sid), messages,
                                   MemoryExtraction.model_json_schema())
        answer, error = self._ask_llm(command, prompt, MemoryExtraction)
        if answer is None:
            return self._queue(sid, "extract", messages, command, error)
        return {"extraction": self._bind_sources(answer, messages)}

    def _ask_llm(self, command: str, prompt: str, model) -> tuple[dict | None, str | None]:
        """(validated answer, None) or (None, why it failed): never raises for the LLM."""
        from pydantic import ValidationError

        from ..extract.llm import LLMFailure, parse_json_answer, run_command
        from ..models import validation_message
        try:
            answer = parse_json_answer(run_command(command, prompt,
                                                   timeout=self._llm_timeout()))
            return model.model_validate(answer).model_dump(exclude_none=True), None
        except LLMFailure as exc:
            return None, str(exc)
        except ValidationError as exc:
            return None, f"the answer does not match the schema: {validation_message(exc)}"

    def _bind_sources(self, extraction: dict, messages: list[dict]) -> dict:
        """Every extracted node points at the messages it came from (all, when unsaid)."""
        known = {m["id"] for m in messages}
        for item in extraction.get("nodes", []):
            node = item.setdefault("node", {})
            ids = [i for i in node.get("sourceMessageIds") or [] if i in known]
            node["sourceMessageIds"] = ids or sorted(known)
        return extraction

    def _llm_timeout(self) -> float:
        return float(self.config.get("extractor.timeout") or DEFAULT_LLM_TIMEOUT)

    def _queue(self, sid, kind, messages, command, error) -> dict:
        job = {"id": new_id("job"), "sessionId": sid, "kind": kind,
               "messageIds": [m["id"] for m in messages], "command": command, "error": error,
               "createdAt": self.env.now_iso()}
        store = self.store
        with store.db.atomic():
            store.summaries.add_job(job)
        return {"sessionId": sid, "messageIds": job["messageIds"], "results": [],
                "queued": job["id"], "error": error}

    def jobs(self, status: str = "pending") -> list[dict]:
        return self.store.summaries.list_jobs(status)

    def retry_jobs(self, *, llm_cmd: str | None = None) -> list[dict]:
        """Run the retry queue again; each job is done, or stays pending with its new error."""
        store = self.store
        outcomes = []
        for job in store.summaries.list_jobs("pending"):
            messages = store.messages.get_messages(job["messageIds"])
            command = llm_cmd or job.get("command") or self._llm_command(None)
            if not messages or not command:
                self._finish_job(job, "dropped", "its messages or command are gone")
                outcomes.append({"jobId": job["id"], "status": "dropped"})
                continue
            if job["kind"] == "summary":
                outcome = self._llm_summary_draft(job["sessionId"], messages, command,
                                                  queue=False)
                if "draft" in outcome:
                    self._append_summary(job["sessionId"], messages, outcome["draft"])
            else:
                outcome = self._llm_extraction_retry(job, messages, command)
            if outcome.get("error"):
                self._finish_job(job, "pending", outcome["error"])
                outcomes.append({"jobId": job["id"], "status": "pending",
                                 "error": outcome["error"]})
            else:
                self._finish_job(job, "done", None)
                outcomes.append({"jobId": job["id"], "status": "done",
                                 "results": outcome.get("results", [])})
        return outcomes

    def _llm_extraction_retry(self, job, messages, command) -> dict:
        from ..extract.prompts import extraction_prompt
        from ..models import MemoryExtraction
        prompt = extraction_prompt(None, messages, MemoryExtraction.model_json_schema())
        answer, error = self._ask_llm(command, prompt, MemoryExtraction)
        if answer is None:
            return {"error": error}
        extraction = self._bind_sources(answer, messages)
        return {"results": self.apply_extraction(extraction, session=job["sessionId"])}

    def _finish_job(self, job, status, error) -> None:
        store = self.store
        with store.db.atomic():
            store.summaries.update_job(job["id"], status=status, error=error,
                                       now=self.env.now_iso())

    # -- summaries ----------------------------------------------------------------------------
    def summarize(self, *, session: str | None = None, llm_cmd: str | None = None,
                  if_needed: bool = False, extract: bool = True) -> dict:
        sid = self.session(session)
        store = self.store
        previous = store.summaries.get_latest_summary(sid)
        messages = store.messages.list_messages_after(sid, previous["toMessageId"] if previous
                                             else None)
        if not messages:
            return {"sessionId": sid, "summary": None, "skipped": True,
                    "reason": "no new messages since the last summary"}
        if if_needed:
            from ..policy.budget import estimate_tokens
            from ..policy.triggers import summary_triggers
            reasons = summary_triggers(messages, estimate_tokens)
            if not reasons:
                return {"sessionId": sid, "summary": None, "skipped": True,
                        "reason": f"not needed yet: {len(messages)} new messages, no trigger"}
        extracted = self.extract(session=sid, llm_cmd=llm_cmd) if extract else None
        command = self._llm_command(llm_cmd)
        if command:
            outcome = self._llm_summary_draft(sid, messages, command, queue=True)
            if outcome.get("queued"):
                return {"sessionId": sid, "summary": None, "skipped": False,
                        "queued": outcome["queued"], "error": outcome["error"],
                        "extraction": extracted}
            draft = outcome["draft"]
        else:
            draft = self._rule_summary(previous, messages, extracted)
        summary = self._append_summary(sid, messages, draft)
        return {"sessionId": sid, "summary": summary, "skipped": False,
                "extraction": extracted}

    def _rule_summary(self, previous, messages, extracted) -> dict:
        from ..extract.summariser import summarise
        from ..policy.topics import is_chinese
        nodes = []
        for result in (extracted or {}).get("results", []):
            if result.get("accepted") and result.get("nodeId"):
                node = self._safe_node(result["nodeId"])
                if node:
                    nodes.append(node)
        chinese = is_chinese(" ".join(m["content"] for m in messages))
        return summarise(previous, messages, nodes, chinese)

    def _safe_node(self, node_id):
        try:
            return self.queries.find_node(node_id)
        except NotFound:
            return None

    def _llm_summary_draft(self, sid, messages, command, *, queue: bool) -> dict:
        from ..models import SummaryDraft
        prompt = self.summary_prompt(session=sid)["prompt"]
        draft, error = self._ask_llm(command, prompt, SummaryDraft)
        if error:
            return self._queue(sid, "summary", messages, command, error) if queue else \
                {"error": error}
        return {"draft": draft}

    def _append_summary(self, sid, messages, draft) -> dict | None:
        from ..policy.sensitive import mask_json
        draft = mask_json(draft)  # a summary is made to be read by models: no credentials
        store = self.store
        with store.db.atomic():
            previous = store.summaries.get_latest_summary(sid)
            summary = {"id": new_id("summary"), "sessionId": sid,
                       "parentSummaryId": previous["id"] if previous else None,
                       "fromMessageId": messages[0]["id"], "toMessageId": messages[-1]["id"],
                       **draft, "createdAt": self.env.now_iso()}
            store.summaries.append_summary(summary)
        return store.summaries.get_summary(summary["id"])

    def summary_prompt(self, *, session: str | None = None) -> dict:
        from ..extract.prompts import summary_prompt
        from ..models import SummaryDraft
        sid = self.session(session)
        previous = self.store.summaries.get_latest_summary(sid)
        messages = self.store.messages.list_messages_after(sid, previous["toMessageId"] if previous
                                                  else None)
        if not messages:
            raise NotFound(f"session {sid} has no messages after its last summary",
                           "log messages first")
        return {"sessionId": sid, "prompt": summary_prompt(
            previous, messages, SummaryDraft.model_json_schema())}

    def extraction_prompt_for(self, *, session: str | None = None) -> str:
        from ..extract.prompts import extraction_prompt
        from ..models import MemoryExtraction
        sid = self.session(session)
        store = self.store
        messages = store.messages.list_messages_after(sid, store.summaries.extraction_mark(sid))
        if not messages:
            raise NotFound(f"session {sid} has no messages left to extract",
                           "log messages first")
        return extraction_prompt(store.summaries.get_latest_summary(sid), messages,
                                 MemoryExtraction.model_json_schema())

    def read_answer(self, text: str, *, extraction: bool = False) -> dict:
        """The JSON object in an answer to a prompt, made by any tool (code fences and prose
        around it are fine); an extraction's must hold its "nodes" list."""
        from ..extract.llm import LLMFailure, parse_json_answer
        try:
            answer = parse_json_answer(text)
        except LLMFailure as exc:
            raise Rejected(str(exc), "give the JSON answer of an LLM (code fences are fine)"
                           ) from None
        if extraction and "nodes" not in answer:
            raise Rejected('an extraction needs a "nodes" list', "for the shape it must have",
                           step=Step(command="schema", target="extraction"))
        return answer

    def apply_answer(self, answer: dict, *, session: str | None = None) -> dict:
        """An answer to a prompt: a summary or an extraction produced by any tool, validated
        first."""
        from pydantic import ValidationError

        from ..models import MemoryExtraction, SummaryDraft, validation_message
        sid = self.session(session)
        is_extraction = "nodes" in answer
        model = MemoryExtraction if is_extraction else SummaryDraft
        try:
            parsed = model.model_validate(answer).model_dump(exclude_none=True)
        except ValidationError as exc:
            raise Rejected(f"the {'extraction' if is_extraction else 'summary'} does not match"
                           f" its schema: {validation_message(exc)}",
                           "for the shape it must have",
                           step=Step(command="schema", target="extraction" if is_extraction
                                     else "summary")) from None
        store = self.store
        previous = store.summaries.get_latest_summary(sid)
        if is_extraction:
            messages = store.messages.list_messages_after(sid, store.summaries.extraction_mark(sid))
            parsed = self._bind_sources(parsed, messages) if messages else parsed
            results = self.apply_extraction(parsed, session=sid)
            if messages:
                self._advance_mark(sid, messages)
            return {"sessionId": sid, "kind": "extraction", "results": results}
        messages = store.messages.list_messages_after(sid, previous["toMessageId"] if previous
                                             else None)
        if not messages:
            raise NotFound(f"session {sid} has no messages after its last summary",
                           "nothing to summarise")
        return {"sessionId": sid, "kind": "summary",
                "summary": self._append_summary(sid, messages, parsed)}

    def summary_chain(self, *, session: str | None = None) -> list[dict]:
        return self.store.summaries.list_summaries(self.session(session))
