// MPI for sweeps (built with L2S_WITH_MPI): under `mpirun -np N` the scenarios are spread over
// the ranks (round-robin by grid index) and rank 0 gathers every rank's store lines.
#pragma once

#include <string>
#include <vector>

namespace l2s::sweep {

// Whether this process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE / PMI_SIZE set).
bool LaunchedByMpi();
// True when MPI support is built in.
bool MpiBuilt();

// RAII MPI session: MPI_Init on construction, MPI_Finalize on destruction (no-ops without MPI).
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank's lines on rank 0 (rank order, each rank's in its order); empty elsewhere.
  std::vector<std::string> Gather(const std::vector<std::string>& mine) const;
  // Rank 0's status code broadcast to every rank.
  int Broadcast(int value) const;

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace l2s::sweep
