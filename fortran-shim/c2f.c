/* Handle conversion between C and Fortran as functions, for languages
 * other than C (in C, mpi.h makes them macros). In MPICH's ABI a handle is
 * the same integer in both, so each is the identity. Written without
 * mpi.h, whose macros have these names. */
typedef int MPI_Fint;

#define C2F(name)                                   \
    MPI_Fint MPI_##name##_c2f(int h) { return h; }  \
    MPI_Fint PMPI_##name##_c2f(int h) { return h; } \
    int MPI_##name##_f2c(MPI_Fint h) { return h; }  \
    int PMPI_##name##_f2c(MPI_Fint h) { return h; }

C2F(Comm)
C2F(Errhandler)
C2F(Group)
C2F(Info)
C2F(Message)
C2F(Op)
C2F(Request)
C2F(Type)
C2F(Win)
C2F(Session)
