#include <bsrmm/bsrmm.h>

int main() { return bsrmm_cuda_compiled() < 0; }
