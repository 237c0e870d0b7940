from gpuenv.cli import main

main()
