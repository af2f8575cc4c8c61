// An abstract encoded search space: what the metaheuristics (random, rw, sa, ga, rl) need of a
// space. A point is one option index per sub-action ("head"), sampled in head order under the
// validity mask. StrategySpace (strategy/space.h) is one; the disaggregated joint space
// (search/joint.h: pool split x prefill strategy x decode strategy) is another.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace l2s {

class EncodedSpace {
 public:
  virtual ~EncodedSpace() = default;

  virtual int num_heads() const = 0;
  virtual int head_size(int h) const = 0;
  virtual const std::vector<int>& head_sizes() const = 0;
  virtual std::string head_name(int h) const = 0;
  virtual std::string option_name(int h, int i) const = 0;
  // Valid options of head h given the earlier heads prefix[0..h); out.size() == head_size(h).
  // Guarantee: choosing every head from its mask in order yields a point Valid() accepts.
  virtual void Mask(std::span<const int> prefix, int h, std::span<uint8_t> out) const = 0;
  // A complete point (num_heads() entries) is structurally valid.
  virtual bool Valid(std::span<const int> idx) const = 0;
  virtual double Size() const = 0;  // product of the head sizes

  // Hints for searchers that exploit structure (rl):
  // the options of head h are ordered (degrees, batch, GPU counts: ascending);
  virtual bool ordinal(int h) const { (void)h; return false; }
  // rl's pair sweep moves head h (degrees, batch and the like; not the operator dims).
  virtual bool structural(int h) const { (void)h; return true; }

  // Hints for the local searcher's moves (search/moves/move.h):
  // heads of one operator group (attention's three dims, an FFN pair) share an id >= 0, unique
  // across the space; -1: the head belongs to no group;
  virtual int group(int h) const { (void)h; return -1; }
  // head h is a batch head: batch fitting moves it down after a memory or SLO miss and up after
  // a valid point while that pays;
  virtual bool batch(int h) const { (void)h; return false; }
  // recipes: known-good settings of the non-degree heads that a recipe move jumps to (e.g.
  // Megatron's dims); recipe_option(h, r) is the option recipe r sets head h to, -1 when recipe r
  // leaves head h alone; recipe 0 also names the option a repair prefers for a dim head;
  virtual int num_recipes() const { return 1; }
  virtual int recipe_option(int h, int r) const { (void)h; (void)r; return -1; }
  // rewrites a complete valid point to the representative of the points that run identically
  // (the local searcher's cache key); the default leaves it as it is.
  virtual void Canonicalize(std::vector<int>* idx) const { (void)idx; }
};

}  // namespace l2s
