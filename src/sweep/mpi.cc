// MPI for sweeps (mpi.h), compiled only with L2S_WITH_MPI.
#include "sweep/mpi.h"

#include <mpi.h>

#include <cstdlib>

namespace l2s::sweep {

bool MpiBuilt() { return true; }

MpiSession::MpiSession() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::vector<std::string> MpiSession::Gather(const std::vector<std::string>& mine) const {
  std::string buf;
  for (const std::string& l : mine) buf += l + "\n";
  int len = static_cast<int>(buf.size());
  std::vector<int> lens(size_), displs(size_);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      displs[r] = total;
      total += lens[r];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(buf.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string::npos) end = all.size();
    if (end > start) out.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int MpiSession::Broadcast(int value) const {
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

}  // namespace l2s::sweep
