/* oxmpi-test: ranks=10
 * coll_pieces at 10 ranks: more ranks than a long Allreduce publishes
 * pieces ahead (8) for, so it gathers each segment whole before folding
 * it instead of folding piece by piece from the mailboxes. */
#include "coll_pieces.c"
