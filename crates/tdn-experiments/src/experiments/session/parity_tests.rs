//! The whole-probe cases of the parity fixture verdicts.json (influence.md §7): `probes`,
//! `ablation_runs` and `restoration_runs`, run as sessions with a scripted runner.

use super::*;

#[tokio::test]
async fn probes_cases() {
    let cs = cases("probes");
    assert_eq!(cs.len(), 4);
    for c in cs {
        let name = c["name"].as_str().unwrap();
        let original = c["original"].as_str().unwrap();
        let outputs = strings(&c["outputs"]);
        let n = outputs.len();
        let table = HashMap::from([
            (String::new(), vec![Some(original.to_owned()); n]),
            ("x".to_owned(), outputs),
        ]);
        let runner = Arc::new(FakeRunner::new(table_script(table)));
        let probes = vec![
            Probe::baseline(),
            Probe::against(
                Intervention::Ablate(
                    vec!["x".to_owned()]
                        .into_iter()
                        .map(crate::analysis::model::UnitId::from)
                        .collect(),
                ),
                ProbeId(0),
            ),
        ];
        let (out, _) = run(
            plan(original, n, probes),
            deps(
                runner,
                embedder_of(&c),
                rule_of(&c),
                Arc::new(MemorySink::new()),
                3,
            ),
        )
        .await;
        let probe = &out.probes[1];
        let e = &c["expect"];
        assert_eq!(
            probe.tally.samples as u64,
            e["samples"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            probe.tally.flips as u64,
            e["flips"].as_u64().unwrap(),
            "{name}"
        );
        let sims = floats(&e["similarities"]);
        assert_eq!(probe.tally.similarities.len(), sims.len(), "{name}");
        for (g, w) in probe.tally.similarities.iter().zip(&sims) {
            assert!((g - w).abs() <= EPS, "{name}: {g} vs {w}");
        }
        check_stats(&probe.tally.similarity(), &e["similarity"], name);
        assert_eq!(
            crate::experiments::verdict::majority(probe.tally.flips, probe.tally.samples),
            e["majority"].as_bool().unwrap(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn ablation_runs_cases() {
    let cs = cases("ablation_runs");
    assert_eq!(cs.len(), 4);
    for c in cs {
        let name = c["name"].as_str().unwrap();
        let samples = crate::experiments::verdict::resolve_samples(c["samples"].as_f64());
        let suspects = c["suspects"].as_array().unwrap();
        let mut table = HashMap::from([(String::new(), strings(&c["baseline_outputs"]))]);
        for s in suspects {
            table.insert(s["id"].as_str().unwrap().to_owned(), strings(&s["outputs"]));
        }
        let subjects: Vec<Subject<'_>> = suspects
            .iter()
            .map(|s| {
                let id = s["id"].as_str().unwrap();
                Subject {
                    id,
                    unit: s["ablatable"].as_bool().unwrap().then_some(id),
                }
            })
            .collect();
        let max = usize::try_from(c["max_suspects"].as_u64().unwrap()).unwrap();
        let tiers = plan_tiers(&subjects, &[], max, 5);
        let runner = Arc::new(FakeRunner::new(table_script(table)));
        let (out, _) = run(
            plan(
                c["original"].as_str().unwrap(),
                samples,
                tiers.probes.clone(),
            ),
            deps(
                Arc::clone(&runner),
                embedder_of(&c),
                rule_of(&c),
                Arc::new(MemorySink::new()),
                4,
            ),
        )
        .await;
        let e = &c["expect"];
        let base = &out.probes[0];
        assert_eq!(
            base.tally.flips as u64,
            e["baseline"]["flips"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            base.tally.samples as u64,
            e["baseline"]["samples"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            base.tally.is_stable_baseline(),
            e["baseline"]["stable"].as_bool().unwrap(),
            "{name}"
        );
        let flags: Vec<String> = e["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(base.flags, flags, "{name}");
        for (want, probe) in e["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&tiers.suspects)
        {
            let id = want["id"].as_str().unwrap();
            match (want["verdict"].as_str(), probe) {
                (None, None) => {}
                (Some(v), Some(p)) => {
                    let r = &out.probes[p.0].result;
                    assert_eq!(r.verdict.map(Verdict::as_str), Some(v), "{name} / {id}");
                    assert_eq!(
                        r.flips as u64,
                        want["flips"].as_u64().unwrap(),
                        "{name} / {id}"
                    );
                    assert_eq!(
                        r.samples as u64,
                        want["samples"].as_u64().unwrap(),
                        "{name} / {id}"
                    );
                }
                (w, g) => panic!("{name} / {id}: expected {w:?}, probe {g:?}"),
            }
        }
        let calls = e["runner_calls"].as_u64().unwrap() as usize;
        assert_eq!(out.runner_calls, calls, "{name}");
        assert_eq!(runner.calls(), calls, "{name}");
    }
}

#[tokio::test]
async fn restoration_runs_cases() {
    let cs = cases("restoration_runs");
    assert_eq!(cs.len(), 4);
    for c in cs {
        let name = c["name"].as_str().unwrap();
        let ids = |k: &str| -> Vec<String> {
            c[k].as_array()
                .unwrap()
                .iter()
                .map(|u| u["id"].as_str().unwrap().to_owned())
                .collect()
        };
        let sent = ids("sent");
        let dropped: Vec<String> = ids("available")
            .into_iter()
            .filter(|a| !sent.contains(a))
            .collect();
        let e = &c["expect"];
        let want_dropped: Vec<String> = e["dropped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(dropped, want_dropped, "{name}");
        let table: HashMap<String, Vec<Option<String>>> = c["outputs_by_restored"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), strings(v)))
            .collect();
        let refs: Vec<&str> = dropped.iter().map(String::as_str).collect();
        let max = usize::try_from(c["max_candidates"].as_u64().unwrap()).unwrap();
        let tiers = plan_tiers(&[], &refs, 5, max);
        let samples = crate::experiments::verdict::resolve_samples(c["samples"].as_f64());
        let runner = Arc::new(FakeRunner::new(table_script(table)));
        let (out, _) = run(
            plan(
                c["original"].as_str().unwrap(),
                samples,
                tiers.probes.clone(),
            ),
            deps(
                Arc::clone(&runner),
                embedder_of(&c),
                rule_of(&c),
                Arc::new(MemorySink::new()),
                2,
            ),
        )
        .await;
        match tiers.baseline {
            None => assert!(e["baseline"].is_null(), "{name}"),
            Some(b) => {
                let base = &out.probes[b.0];
                assert_eq!(
                    base.tally.flips as u64,
                    e["baseline"]["flips"].as_u64().unwrap(),
                    "{name}"
                );
                assert_eq!(
                    base.tally.is_stable_baseline(),
                    e["baseline"]["stable"].as_bool().unwrap(),
                    "{name}"
                );
                let flags: Vec<String> = e["flags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_str().unwrap().to_owned())
                    .collect();
                assert_eq!(base.flags, flags, "{name}");
            }
        }
        for (want, probe) in e["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&tiers.dropped)
        {
            let id = want["id"].as_str().unwrap();
            match (want["verdict"].as_str(), probe) {
                (None, None) => {}
                (Some(v), Some(p)) => {
                    let r = &out.probes[p.0].result;
                    assert_eq!(r.verdict.map(Verdict::as_str), Some(v), "{name} / {id}");
                    assert_eq!(
                        r.flips as u64,
                        want["flips"].as_u64().unwrap(),
                        "{name} / {id}"
                    );
                    check_stats(r.similarity.as_ref().unwrap(), &want["similarity"], name);
                    let class = if v == "confirmed" {
                        "content-bug"
                    } else {
                        "no-detected-effect"
                    };
                    assert_eq!(r.class.map(|c| c.as_str()), Some(class), "{name} / {id}");
                    assert_eq!(r.cost, None, "restored units get no cost verdict");
                }
                (w, g) => panic!("{name} / {id}: expected {w:?}, probe {g:?}"),
            }
        }
        assert_eq!(
            tiers.dropped.len(),
            e["candidates"].as_array().unwrap().len(),
            "{name}"
        );
        assert_eq!(
            runner.calls() as u64,
            e["runner_calls"].as_u64().unwrap(),
            "{name}"
        );
    }
}
