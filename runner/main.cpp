// kernelloop-runner: the only process that touches a GPU (stub until the runner issue).
#include <iostream>

int main()
{
    std::cout << R"({"v":1,"event":"hello","status":"no-device","detail":"runner not implemented yet"})" << std::endl;
    return 0;
}
