//! The ticket-lock validation cases publish what the Boyd-Wickizer Markov
//! model predicts for their config: recomputed here from the config's
//! program (the serial and think steps) and its machine profile (the line
//! transfer between the CPUs the threads run on), so neither can drift from
//! the published figures.

use futexsim::analysis::ticket_lock::TicketLockModel;
use futexsim::machine::Machine;
use futexsim::validate::{self, case::CaseSpec};
use futexsim::workload::program::{ComputeDist, StepSpec};
use futexsim::workload::WorkloadSpec;
use std::path::Path;

const PS_PER_NS: f64 = 1000.0;

/// The model of the config's runs and the thread counts it sweeps.
fn model_of_config() -> (TicketLockModel, Vec<u32>, Vec<CaseSpec>) {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join(validate::SUITE);
    let (cases, configs) = validate::load(&suite).unwrap();
    let cases: Vec<CaseSpec> = cases
        .into_iter()
        .filter(|c| c.config.ends_with("ticket-knee.toml"))
        .collect();
    let config = &configs[&cases[0].config];
    let WorkloadSpec::Program(program) = &config.points[0].workload else {
        panic!("the ticket-lock config runs a step program");
    };
    // lock, the serial section, unlock, the think time: drawn from an
    // exponential, as the chain's arrivals are.
    let [StepSpec::Lock { .. }, StepSpec::Compute {
        ns: serial,
        dist: ComputeDist::Fixed,
    }, StepSpec::Unlock { .. }, StepSpec::Compute {
        ns: think,
        dist: ComputeDist::Exponential,
    }] = program.steps.as_slice()
    else {
        panic!("unexpected steps {:?}", program.steps);
    };
    let machine = Machine::new(config.points[0].machine.clone()).unwrap();
    let threads: Vec<u32> = config
        .points
        .iter()
        .map(|p| p.axis_values[0].parse().unwrap())
        .collect();
    let cpus = *threads.iter().max().unwrap();
    // Thread t runs on CPU t: every pair among them must cost the same transfer.
    let transfer = machine.transfer_ps(0, 1);
    assert!((0..cpus).all(|a| (0..cpus).all(|b| a == b || machine.transfer_ps(a, b) == transfer)));
    let model = TicketLockModel {
        think: *think as f64,
        serial: *serial as f64,
        transfer: transfer as f64 / PS_PER_NS,
    };
    (model, threads, cases)
}

fn published(case: &CaseSpec) -> f64 {
    case.published.unwrap()
}

#[test]
fn the_published_knee_is_the_models() {
    let (model, threads, cases) = model_of_config();
    let case = cases.iter().find(|c| c.argmax.is_some()).unwrap();
    let knee = model.knee(&threads).unwrap();
    assert_eq!(published(case), f64::from(knee));
}

#[test]
fn the_published_collapse_is_the_models() {
    let (model, threads, cases) = model_of_config();
    let case = cases.iter().find(|c| c.denominator.is_some()).unwrap();
    let last = *threads.last().unwrap();
    let knee = model.knee(&threads).unwrap();
    let at = |s: &validate::case::Selector| s.at["threads"].parse::<u32>().unwrap();
    assert_eq!(at(&case.numerator), last);
    assert_eq!(at(case.denominator.as_ref().unwrap()), knee);
    let ratio = model.throughput(last) / model.throughput(knee);
    assert!(
        (published(case) / ratio - 1.0).abs() < 1e-3,
        "model {ratio}"
    );
}
