// The switch program itself, run through the STF corpus (see roce_switch.stf).
#include "../../p4/programs/roce_switch.p4"
