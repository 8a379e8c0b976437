"""The one printed table (rich, stdout) built from the results dict."""

from __future__ import annotations

from typing import Any

PIPELINE_LABELS = {
    "bm25": "BM25 only",
    "vector": "vector only",
    "hybrid_rrf": "hybrid RRF (fused order)",
    "before": "before: hybrid RRF + recency (default ≤ 4190960)",
    "lexical_evidence": "default without vectors (BM25 leg, evidence)",
    "hybrid_rerank": "default + cross-encoder rerank",
    "default": "default (hybrid, evidence)",
}
SHOWN = ("bm25", "vector", "hybrid_rrf", "before", "lexical_evidence", "default")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _ok(flag: bool | None) -> str:
    return "" if flag is None else ("[green]met[/]" if flag else "[red]missed[/]")


def push_rows(p: dict[str, Any] | None) -> list[tuple[str, str, str, str, str]]:
    """Push peak RSS per memory size, its growth, and the peak at 1M chunks (measured, or
    extrapolated when 1M was not pushed)."""
    if not p:
        return []
    out = [("[b]Push peak RSS[/] (synthetic memory, child process)", "", "", "", "")]
    for size, e in p["sizes"].items():
        out.append(
            (
                f"  {int(size) // 1000}k chunks",
                f"{e['peak_rss_mb']:.0f} MB",
                f"floor {p['floor_mb']:.0f} MB (imports + outbox); push {e['seconds']:.0f} s"
                + (f"; {e['malloc_arenas']} malloc arenas" if e.get("malloc_arenas") else ""),
                "",
                "",
            )
        )
    if "measured_1m_mb" in p or "extrapolated_1m_mb" in p:
        measured = "measured_1m_mb" in p
        out.append(
            (
                "  growth; peak at 1M chunks "
                + ("(measured)" if measured else "(linear extrapolation)"),
                f"{p['measured_1m_mb' if measured else 'extrapolated_1m_mb']:.0f} MB",
                f"{p['kb_per_chunk']:.2f} KB per chunk between the two sizes",
                f"≤ {p['target_mb']:.0f} MB",
                _ok(p["met"]),
            )
        )
    return out


def rows(r: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(section/figure, value, baseline or context, target, status) rows, in print order."""
    out: list[tuple[str, str, str, str, str]] = []
    q = r["quality"]
    out.extend(quality_rows(q, "dev set, 109 answerable"))
    loc = r.get("locomo", {})
    if "skipped" in loc:
        out.append(("[b]Recall quality[/] (LoCoMo)", "skipped", loc["skipped"], "", ""))
    elif loc:
        n = sum(loc.get("memories", {}).values())
        out.extend(
            quality_rows(
                loc, f"LoCoMo dev half, {len(loc.get('memories', {}))} memories, {n} questions"
            )
        )
    out.extend(target_rows(q, loc))
    out.extend(miss_rows(r.get("misses")))
    if "index" not in r:  # --quality-only
        m = r["machine"]
        out.append(
            (
                "[b]Machine[/]",
                f"{m['cpu']}, {m['cores_usable']} cores",
                f"py {m['python']}, load {m['load_avg_1m_at_start']}",
                r["mode"],
                m["git_commit"][:12],
            )
        )
        return out
    p = r["no_answer_probe"]
    na = q.get("default", {}).get("no_answer_questions_with_hits", "?")
    out.append(
        (
            "  no-answer questions",
            f"hits returned for {na}",
            f"best cosine median {p['no_answer_median']:.2f} vs answerable {p['answerable_median']:.2f}; "
            f"{p['no_answer_below']}/{p['no_answer_total']} under the answerable 5th pct ({p['threshold']:.2f})",
            "",
            "",
        )
    )
    i = r["index"]
    out.append(
        ("[b]Index throughput[/] (dev set, same texts, budgeted sweeps in turn)", "", "", "", "")
    )
    out.append(
        (
            "  new recipe vs today's, until searchable",
            f"{i['new_searchable_chunks_per_s']:.1f} vs {i['old_chunks_per_s']:.1f} chunks/s",
            f"×{i['speedup_searchable']:.2f} (every vector, tool calls too: "
            f"{i['new_every_vector_chunks_per_s']:.1f} chunks/s, ×{i['speedup_every_vector']:.2f})",
            "≥ ×5",
            _ok(i["speedup_searchable"] >= i["target_speedup"]),
        )
    )
    out.append(
        (
            "  pipeline vs bare onnxruntime (new recipe)",
            f"{i['new_every_vector_chunks_per_s']:.1f} chunks/s",
            f"bare {i['bare_chunks_per_s']:.1f} chunks/s → ratio {i['ratio']:.2f}",
            "≥ 0.85",
            _ok(i["ratio"] >= 0.85),
        )
    )
    h = i["history_300k"]
    out.append(
        (
            "  300k-chunk history: prose searchable",
            f"{h['prose_searchable_min']:.0f} min",
            f"today's recipe, everything: {h['old_recipe_min']:.0f} min",
            "≤ 10 min",
            _ok(h["prose_searchable_min"] <= 10),
        )
    )
    out.append(
        (
            "  300k-chunk history: all tiers searchable",
            f"{h['all_tiers_searchable_min']:.0f} min",
            f"every vector (tool calls too): {h['every_vector_min']:.0f} min",
            "≤ 45 min",
            _ok(h["all_tiers_searchable_min"] <= 45),
        )
    )
    out.append(
        (
            "  peak RSS",
            f"{i['peak_rss_mb']:.0f} MB",
            f"{i['chunks']} chunks, {i['tokens']} tokens",
            "",
            "",
        )
    )
    lat = r["latency"]
    out.append(
        ("[b]Recall latency[/] (warm, p50 / p95)", "", f"rerank: {lat['rerank_model']}", "", "")
    )
    base = lat["baseline"]
    for size, e in lat["sizes"].items():
        nr = e["no_rerank"]
        n = int(size)
        target = (
            "p50 ≤ 150, p95 ≤ 250 ms"
            if n >= 1_000_000
            else ("p50 ≤ 150 ms" if n >= 100_000 else "")
        )
        met = nr["p50_ms"] <= 150 and (n < 1_000_000 or nr["p95_ms"] <= 250)
        label = f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"
        out.append(
            (
                f"  {label} chunks, no rerank",
                f"{nr['p50_ms']:.0f} / {nr['p95_ms']:.0f} ms",
                f"{nr['ratio_to_bare_query_embed']}× bare query embed ({base['bare_query_embed_p50_ms']:.1f} ms)"
                + ("; vector index" if e.get("vector_index") else "; sqlite-vec scan"),
                target,
                _ok(met) if target else "",
            )
        )
        stages = ", ".join(f"{k} {v:.1f}" for k, v in nr["stages_p50_ms"].items())
        out.append(("    stages p50 (ms)", "", stages, "", ""))
        rr = e.get("rerank_30")
        if rr is None:
            continue
        big = n >= 100_000
        out.append(
            (
                f"  {label} chunks, rerank 30",
                f"{rr['p50_ms']:.0f} / {rr['p95_ms']:.0f} ms",
                f"rerank stage {rr['ratio_to_bare_rerank']}× bare ({base['bare_rerank_30_p50_ms']:.0f} ms)",
                "p50 ≤ 1 s" if big else "",
                _ok(rr["p50_ms"] <= 1000) if big else "",
            )
        )
    c = r["cold_start"]
    ok_codes = c["exit_codes"] == [0]
    out.append(
        (
            "  cold start `funes recall`",
            f"{c['p50_ms']:.0f} ms to first byte",
            f"{c['ratio_to_python_start']}× python start ({c['python_start_p50_ms']:.0f} ms)",
            "≤ 250 ms",
            _ok(c["p50_ms"] <= 250) if ok_codes else f"[red]exit {c['exit_codes']}[/]",
        )
    )
    if "version_p50_ms" in c:
        out.append(
            (
                "  `funes --version`",
                f"{c['version_p50_ms']:.0f} ms",
                "process start to exit",
                "≤ 100 ms",
                _ok(c["version_p50_ms"] <= 100),
            )
        )
    out.extend(remote_rows(r.get("remote_recall")))
    h = r["hook_enqueue"]
    if "skipped" in h:
        out.append(("[b]Hook enqueue[/]", "skipped", h["skipped"], "p95 ≤ 50 ms", ""))
    else:
        out.append(
            (
                "[b]Hook enqueue[/] (p50 / p95)",
                f"{h['p50_ms']:.0f} / {h['p95_ms']:.0f} ms",
                f"{h['ratio_to_python_start']}× python -I -S start ({h['python_start_p50_ms']:.0f} ms)",
                "p95 ≤ 50 ms; ≤ 1.3× start",
                _ok(h["p95_ms"] <= 50 and h["ratio_to_python_start"] <= 1.3)
                if h["exit_codes"] == [0]
                else f"[red]exit {h['exit_codes']}[/]",
            )
        )
    s = r["storage"]
    out.append(("[b]Storage[/] (bytes per chunk)", "total", "data / FTS / vectors / other", "", ""))
    for key, label in (
        ("devset_int8", "dev set, int8 vectors"),
        ("devset_float32", "dev set, float32 vectors"),
    ):
        e = s[key]
        out.append(
            (
                f"  {label}",
                f"{e['total']:.0f}",
                f"{e['data']:.0f} / {e['fts']:.0f} / {e['vectors']:.0f} / {e['other']:.0f}  ({e['chunks']} chunks)",
                "≤ 1200" if key == "devset_int8" else "",
                _ok(e["total"] <= 1200) if key == "devset_int8" else "",
            )
        )
    for size, e in lat["sizes"].items():
        b = e["bytes_per_chunk"]
        out.append(
            (
                f"  {int(size) // 1000}k synthetic, int8",
                f"{b['total']:.0f}",
                f"{b['data']:.0f} / {b['fts']:.0f} / {b['vectors']:.0f} / {b['other']:.0f}",
                "",
                "",
            )
        )
    v = s["fts_detail_variants_bytes_per_chunk"]
    out.append(
        (
            "  FTS5 detail full / column / none",
            f"{v['full']:.0f} / {v['column']:.0f} / {v['none']:.0f}",
            "dev set texts",
            "",
            "",
        )
    )
    for name, e in s["quantization_turn_hit5"].items():
        loss = e["float32"] - e["int8"]
        out.append(
            (
                f"  int8 cost, {name} turn hit@5",
                f"{100 * loss:+.1f} pts",
                f"float32 {_pct(e['float32'])} → int8 {_pct(e['int8'])}",
                "≤ 1 pt",
                _ok(loss <= 0.01 + 1e-9),
            )
        )
    out.extend(push_rows(r.get("push_memory")))
    red = r["redaction"]
    mbps = red.get("mb_per_s")
    out.append(
        (
            "[b]Redaction[/]",
            f"{mbps} MB/s" if mbps is not None else red.get("source", ""),
            f"indexing with/without redaction {red['index_with_vs_without_redaction']}× (est.)",
            "≤ 1.10×",
            _ok(red["index_with_vs_without_redaction"] <= 1.10),
        )
    )
    if "false_positives" in red:
        out.append(
            (
                "  secret corpus (missed / false positives)",
                f"{red['missed']} / {red['false_positives']}",
                f"{red['secret_shapes']} secret shapes, {red['lookalikes']} look-alikes",
                "0 / 0",
                _ok(red["missed"] == 0 and red["false_positives"] == 0),
            )
        )
    field = red.get("field")
    if field and "placements" in field:
        out.append(
            (
                "  field corpus: placements reaching the store",
                f"{field['reach_store_pct']}%",
                f"{field['reach_store']} of {field['placements']} ({field['values']} values, "
                f"{field['kinds']} kinds)",
                "≤ 2%",
                _ok(field["reach_store_pct"] <= 2.0),
            )
        )
        out.append(
            (
                "  field corpus: placements reaching a push",
                str(field["reach_push"]),
                f"gate held back {field['push_held_back_chunks']} chunks",
                "0",
                _ok(field["reach_push"] == 0),
            )
        )
        out.append(
            (
                "  non-secrets redacted (all / code and data)",
                f"{field['non_secret_redacted_pct']}% / {field['code_data_redacted_pct']}%",
                f"{field['non_secret_redacted']} of {field['non_secret']}, "
                f"{field['code_data_redacted']} of {field['code_data']}; gate holds back "
                f"{field['gate_held_back_non_secret']}",
                "≤ 5% / ≤ 1%",
                _ok(field["non_secret_redacted_pct"] <= 5 and field["code_data_redacted_pct"] <= 1),
            )
        )
    m = r["machine"]
    out.append(
        (
            "[b]Machine[/]",
            f"{m['cpu']}, {m['cores_usable']} cores",
            f"py {m['python']}, ort {m['onnxruntime']}, sqlite {m.get('store_sqlite')}, load {m['load_avg_1m_at_start']}",
            r["mode"],
            m["git_commit"][:12],
        )
    )
    return out


def quality_rows(q: dict[str, Any], title: str) -> list[tuple[str, str, str, str, str]]:
    """Per pipeline turn and session hit@1 / hit@5 / MRR, then turn hit@1 / hit@5 per category."""
    out = [
        (
            f"[b]Recall quality[/] ({title})",
            "turn h@1 / h@5 / MRR",
            "session h@1 / h@5 / MRR",
            "",
            "",
        )
    ]
    for name, label in PIPELINE_LABELS.items():
        e = q.get(name, {})
        if not e.get("available"):
            note = e.get("note", "")
            out.append(
                (f"  {label}", "n/a", note.split("): ")[0] + ")" if "): " in note else note, "", "")
            )
            continue
        o = e["overall"]
        if name == "default" and e.get("note"):
            label = "default (hybrid, evidence; no reranker offline)"
        out.append(
            (
                f"  {label}",
                f"{_pct(o['turn_hit@1'])} / {_pct(o['turn_hit@5'])} / {_pct(o['turn_mrr'])}",
                f"{_pct(o['session_hit@1'])} / {_pct(o['session_hit@5'])} / {_pct(o['session_mrr'])}",
                f"{e.get('ms_per_question', '')} ms/q" if e.get("ms_per_question") else "",
                "",
            )
        )
        if e.get("apart"):
            a = e["apart"]
            out.append(
                (
                    "    adversarial (apart)",
                    f"{_pct(a['turn_hit@1'])} / {_pct(a['turn_hit@5'])} / {_pct(a['turn_mrr'])}",
                    f"{_pct(a['session_hit@1'])} / {_pct(a['session_hit@5'])} / {_pct(a['session_mrr'])}",
                    f"n {a['n']}",
                    "",
                )
            )
    shown = [n for n in SHOWN if q.get(n, {}).get("available")]
    cats = list(q[shown[0]]["per_category"]) if shown else []
    out.append(("  turn hit@1 / hit@5 by category", " · ".join(shown), "n", "", ""))
    for c in cats:
        vals = " · ".join(
            f"{_pct(q[n]['per_category'][c]['turn_hit@1'])}/{_pct(q[n]['per_category'][c]['turn_hit@5'])}"
            for n in shown
        )
        out.append((f"    {c}", vals, str(q[shown[0]]["per_category"][c]["n"]), "", ""))
    return out


def target_rows(q: dict[str, Any], loc: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """Issue 14's targets for the default pipeline, and no offered pipeline below BM25 alone."""
    out: list[tuple[str, str, str, str, str]] = []
    d = q.get("default", {})
    if d.get("available"):
        o = d["overall"]
        out.append(
            (
                "  dev set default turn hit@1 / hit@5",
                f"{_pct(o['turn_hit@1'])} / {_pct(o['turn_hit@5'])}",
                "",
                "≥ 55 / ≥ 88",
                _ok(o["turn_hit@1"] >= 0.55 - 1e-9 and o["turn_hit@5"] >= 0.88 - 1e-9),
            )
        )
    ld = loc.get("default", {}) if loc else {}
    if ld.get("available"):
        o = ld["overall"]
        out.append(
            (
                "  LoCoMo default session h@1 / h@5, turn h@1",
                f"{_pct(o['session_hit@1'])} / {_pct(o['session_hit@5'])}, {_pct(o['turn_hit@1'])}",
                "",
                "≥ 75 / ≥ 92, ≥ 45",
                _ok(
                    o["session_hit@1"] >= 0.75 - 1e-9
                    and o["session_hit@5"] >= 0.92 - 1e-9
                    and o["turn_hit@1"] >= 0.45 - 1e-9
                ),
            )
        )
    for label, res in (("dev set", q), ("LoCoMo", loc or {})):
        base = res.get("bm25", {})
        if not base.get("available"):
            continue
        worst = []
        for name in ("lexical_evidence", "hybrid_rerank", "default"):
            e = res.get(name, {})
            if not e.get("available"):
                continue
            for key in ("turn_hit@1", "turn_hit@5", "session_hit@1", "session_hit@5"):
                worst.append((e["overall"][key] - base["overall"][key], name, key))
        if worst:
            gap, name, key = min(worst)
            out.append(
                (
                    f"  {label}: offered pipelines − BM25 alone, worst",
                    f"{100 * gap:+.1f} pts",
                    f"{name} {key}",
                    "≥ 0",
                    _ok(gap >= -1e-9),
                )
            )
    return out


def miss_rows(m: dict[str, Any] | None) -> list[tuple[str, str, str, str, str]]:
    """Honest misses: answerable questions kept, no-answer and probe questions reported missed."""
    if not m:
        return []
    kept, missed = m["answerable_kept_all"], m["missed_all"]
    per_set = ", ".join(f"{k} {_pct(v['share'])}" for k, v in m["answerable_kept"].items())
    na = m["no_answer_missed"]
    off = ", ".join(f"{k} {v['count']}/{v['n']}" for k, v in m["off_topic_missed"].items())
    non = ", ".join(f"{k} {v['count']}/{v['n']}" for k, v in m["nonsense_missed"].items())
    adv = m["adversarial_missed"]
    return [
        (f"[b]Honest misses[/] (support < {m['threshold']})", "", "", "", ""),
        (
            "  answerable questions that keep their hits",
            f"{_pct(kept['share'])}% of {kept['n']}",
            per_set,
            "≥ 95%",
            _ok(kept["share"] >= m["targets"]["kept"] - 1e-9),
        ),
        (
            "  no-answer, off-topic, nonsense reported as misses",
            f"{_pct(missed['share'])}% of {missed['n']}",
            f"dev no-answer {na['count']}/{na['n']}; off-topic {off}; nonsense {non}",
            "≥ 80%",
            _ok(missed["share"] >= m["targets"]["missed"] - 1e-9),
        ),
        (
            "  LoCoMo adversarial reported as misses (information)",
            f"{adv['count']}/{adv['n']}",
            "their evidence is in the conversation",
            "",
            "",
        ),
    ]


REMOTE_LABELS = {"dir": "directory remote", "hub": "Hub stand-in (loopback)"}


def remote_rows(rr: dict[str, Any] | None) -> list[tuple[str, str, str, str, str]]:
    """Rows for warm recall from a remote vs local (bench/remote_latency.py results)."""
    if not rr:
        return []
    target = rr["target_ratio"]
    out = [("[b]Remote recall[/] (warm, dev-set memory)", "remote / local p50", "", "", "")]
    for via, label in REMOTE_LABELS.items():
        e = rr.get(via)
        if not e:
            continue
        if "error" in e:
            out.append((f"  {label}", "failed", e["error"], f"≤ {target}×", "[red]error[/]"))
            continue
        for run in e["runs"]:
            ttl = run["ttl_s"]
            check = "head checked every call" if ttl == 0 else f"head checked ≤ once per {ttl:g} s"
            sent = run.get("hub_requests")
            if sent is not None:
                check += f"; {sent} Hub requests in {run['remote_calls']} calls"
            out.append(
                (
                    f"  {label}, TTL {ttl:g} s",
                    f"{run['remote_ms']:.0f} / {run['local_ms']:.0f} ms = {run['ratio']:.2f}×",
                    f"{run['overhead_ms']:+.1f} ms; p95 {run['remote_p95_ms']:.0f} / "
                    f"{run['local_p95_ms']:.0f} ms; {check}",
                    f"≤ {target}×",
                    _ok(run["ratio"] is not None and run["ratio"] <= target),
                )
            )
    return out


def print_table(results: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="funes bench", show_lines=False)
    for col in ("figure", "value", "baseline / context", "target", "status"):
        table.add_column(col, overflow="fold")
    for row in rows(results):
        table.add_row(*row)
    Console(width=200).print(table)
