/* Times one MPI_Allreduce (MPI_SUM of SIZE/4 floats) for each SIZE on the command line and prints
 * "SIZE SIMULATED_US" per size from rank 0 (the slowest rank's time). The first size starts right after MPI_Init,
 * where SMPI starts every rank at simulated time 0, as `ddlsim collective` does; later sizes start after a barrier,
 * as OSU's osu_allreduce does (its exit skew, about one latency, is then part of the time).
 * Built with smpicc and run with smpirun by run.sh; not part of the build or the test suite. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    const long bytes = atol(argv[i]);
    const int count = (int)(bytes / 4 > 0 ? bytes / 4 : 1);
    float* in = calloc((size_t)count, sizeof(float));
    float* out = calloc((size_t)count, sizeof(float));
    if (i > 1)
      MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double local = MPI_Wtime() - start;
    double worst = 0;
    MPI_Reduce(&local, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
      printf("%ld %.3f\n", (long)count * 4, worst * 1e6);
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
