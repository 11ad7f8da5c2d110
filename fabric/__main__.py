from fabric.cli import main

main()
