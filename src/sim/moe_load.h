// Load of the busiest expert-parallel rank of a MoE layer (docs/dev/COST_MODEL.md "Expert load").
//
// The step time of a MoE layer is set by the rank that receives the most routed token copies.
// Two effects put it above the mean (copies / ep):
//   static skew  - experts are not equally popular. Popularity is modelled as lognormal with
//                  dispersion `sigma` (p_i = exp(sigma * z_i), z_i the standard-normal quantiles
//                  (i + 1/2) / E, normalised). Without redundant slots (slots == 0) experts sit on
//                  ranks in checkpoint order, which is unrelated to popularity: the factor is the
//                  mean, over 16 fixed shuffles, of the largest rank share x ep. With slots > 0
//                  the placement is EPLB's: the slots - E redundant slots go one at a time to the
//                  expert with the largest load per replica, and the slots are packed onto ranks
//                  (slots / ep each) heaviest first onto the least-loaded rank with room.
//   sampling     - a step routes a finite number of copies: a rank's count is binomial with
//                  mean copies/ep, and the largest of ep such counts is about
//                  mean + sd * sqrt(2 ln ep).
// imbalance = static x sampling, clamped to [1, ep].
#pragma once

namespace l2s {

struct MoeLoad {
  double copies = 0;   // routed token copies in the stage per step (tokens x top-k)
  int experts = 0;     // routed experts E
  int ep = 1;          // expert-parallel ranks
  int slots = 0;       // expert slots (0 = one per expert, checkpoint placement)
  double sigma = 0;    // lognormal dispersion of expert popularity
};

// Busiest-rank load / mean load (>= 1). Deterministic. Allocates (the static factor's
// placement); the simulator precomputes static factors (Simulator::StaticLoadFactor).
double MoeImbalance(const MoeLoad& in);

// static x sampling clamped to [1, ep], from an already computed static factor (the simulator
// precomputes those; MoeImbalance computes it).
double CombinedImbalance(double static_factor, double copies, int ep);

// The static factor alone (sampling term excluded).
double MoeStaticImbalance(int experts, int ep, int slots, double sigma);

// Binomial max-of-ep factor alone: 1 + sqrt(2 ln ep) sqrt((1 - 1/ep) / (copies / ep)).
double MoeSamplingImbalance(double copies, int ep);

// Standard-normal quantile (Acklam's rational approximation, |error| < 1.2e-9 relative).
double NormalQuantile(double p);

}  // namespace l2s
