// SPDX-License-Identifier: MIT
// Spins for SECONDS (default 0.5) in a thread, through a generic function,
// a closure in it and a trait's method on a generic type: the Rust names
// tests/e2e/rust-names.sh expects report to demangle. Built by that test.
use std::hint::black_box;
use std::time::Instant;

struct Spinner<T> {
    seed: T,
}

trait Work {
    fn spin(&self, n: u64) -> u64;
}

impl<T: Copy + Into<u64>> Work for Spinner<T> {
    #[inline(never)]
    fn spin(&self, n: u64) -> u64 {
        let mut x: u64 = self.seed.into();
        for i in 0..n {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        x
    }
}

#[inline(never)]
fn churn<W: Work>(w: &W, secs: f64) -> u64 {
    let start = Instant::now();
    let mut acc = 0;
    // Called through a black-boxed reference: a frame of its own.
    let closure = |n: u64| w.spin(n).rotate_left(7);	// not a tail call
    let step: &dyn Fn(u64) -> u64 = black_box(&closure);
    while start.elapsed().as_secs_f64() < secs {
        acc ^= step(200_000);
    }
    acc
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0.5);
    let w = Spinner { seed: 7u32 };
    let spun = std::thread::spawn(move || churn(&w, secs)).join().unwrap();
    println!("{}", black_box(spun) & 1);
}
