// mpi.h parts that do not need MPI: launcher detection, and the single-process stand-in.
#include <cstdlib>

#include "sweep/mpi.h"

namespace l2s::sweep {

bool LaunchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

#ifndef L2S_WITH_MPI
bool MpiBuilt() { return false; }
MpiSession::MpiSession() = default;
MpiSession::~MpiSession() = default;
std::vector<std::string> MpiSession::Gather(const std::vector<std::string>& mine) const { return mine; }
int MpiSession::Broadcast(int value) const { return value; }
#endif

}  // namespace l2s::sweep
