from gpuenv.fastpath import main

main()
