import io.symmem.*;
import io.symmem.collective.*;

public class AllReduceExample {
    public static void main(String[] args) {
        try (SymmemWorld world = Symmem.fromEnvironment();
                SymmetricBuffer buffer = world.group().allocate(DType.FLOAT32, 4)) {
            buffer.write(new float[] {world.rank(), 1, 2, 3});
            world.group().allReduce(buffer, ReduceOp.SUM, Algorithm.ONE_SHOT);
            float[] sum = new float[4];
            buffer.read(sum);
            System.out.println("rank " + world.rank() + " of " + world.size() + " (" + world.backend() + "): "
                    + java.util.Arrays.toString(sum));
        }
    }
}
